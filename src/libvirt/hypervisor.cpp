// The seam's own types: errors, names of states and events, subscriptions.
#include "libvirt/hypervisor.hpp"

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include <array>
#include <utility>

namespace bowline::libvirt {

// ---- errors ------------------------------------------------------------------------------

HypervisorError::HypervisorError(const std::string& message, int code, int error_domain,
                                 std::string cause)
    : util::UpstreamError("libvirt", message),
      code_(code),
      error_domain_(error_domain),
      cause_(std::move(cause)) {}

bool HypervisorError::is_no_domain() const noexcept {
  return code_ == VIR_ERR_NO_DOMAIN;
}
bool HypervisorError::is_no_network() const noexcept {
  return code_ == VIR_ERR_NO_NETWORK;
}
bool HypervisorError::is_operation_invalid() const noexcept {
  return code_ == VIR_ERR_OPERATION_INVALID;
}
bool HypervisorError::is_unsupported() const noexcept {
  return code_ == VIR_ERR_NO_SUPPORT || code_ == VIR_ERR_OPERATION_UNSUPPORTED ||
         code_ == VIR_ERR_ARGUMENT_UNSUPPORTED ||
         (code_ == VIR_ERR_INVALID_ARG && cause_.find("unsupported flags") != std::string::npos);
}
bool HypervisorError::is_agent_unavailable() const noexcept {
  return code_ == VIR_ERR_AGENT_UNRESPONSIVE || code_ == VIR_ERR_AGENT_UNSYNCED;
}

// ---- states and events -------------------------------------------------------------------

std::string paused_by_error(const DomainStatus& status) {
  if (status.state != DomainState::Paused) return {};
  switch (status.reason) {
    case VIR_DOMAIN_PAUSED_UNKNOWN:
      return "internal error";
    case VIR_DOMAIN_PAUSED_IOERROR:
      return "I/O error";
    case VIR_DOMAIN_PAUSED_CRASHED:
      return "crashed";
    default:
      return {};
  }
}

bool paused_by_revert(const DomainStatus& status) {
  return status.state == DomainState::Paused && status.reason == VIR_DOMAIN_PAUSED_FROM_SNAPSHOT;
}

const char* to_string(DomainState state) {
  switch (state) {
    case DomainState::NoState:
      return "no state";
    case DomainState::Running:
      return "running";
    case DomainState::Blocked:
      return "blocked";
    case DomainState::Paused:
      return "paused";
    case DomainState::ShuttingDown:
      return "shutting down";
    case DomainState::Shutoff:
      return "shut off";
    case DomainState::Crashed:
      return "crashed";
    case DomainState::PMSuspended:
      return "suspended by power management";
    case DomainState::Unknown:
      break;
  }
  return "unknown";
}

const char* to_string(LifecycleEventType type) {
  switch (type) {
    case LifecycleEventType::Defined:
      return "defined";
    case LifecycleEventType::Undefined:
      return "undefined";
    case LifecycleEventType::Started:
      return "started";
    case LifecycleEventType::Suspended:
      return "suspended";
    case LifecycleEventType::Resumed:
      return "resumed";
    case LifecycleEventType::Stopped:
      return "stopped";
    case LifecycleEventType::Shutdown:
      return "shutdown";
    case LifecycleEventType::PMSuspended:
      return "suspended by power management";
    case LifecycleEventType::Crashed:
      return "crashed";
    case LifecycleEventType::Unknown:
      break;
  }
  return "unknown";
}

namespace {

// libvirt's detail names, indexed by the detail value (libvirt-domain.h, stable ABI).
template <std::size_t N>
const char* pick(const std::array<const char*, N>& names, int detail) {
  return detail >= 0 && static_cast<std::size_t>(detail) < N ? names[detail] : nullptr;
}

const char* detail_name(LifecycleEventType type, int detail) {
  static_assert(VIR_DOMAIN_EVENT_STOPPED_CRASHED == 2 && VIR_DOMAIN_EVENT_STOPPED_FAILED == 5);
  static_assert(VIR_DOMAIN_EVENT_STARTED_BOOTED == 0 && VIR_DOMAIN_EVENT_SHUTDOWN_HOST == 2);
  switch (type) {
    case LifecycleEventType::Defined:
      return pick(std::array{"added", "updated", "renamed", "from snapshot"}, detail);
    case LifecycleEventType::Undefined:
      return pick(std::array{"removed", "renamed"}, detail);
    case LifecycleEventType::Started:
      return pick(
          std::array{"booted", "migrated", "restored", "from snapshot", "wakeup", "recreated"},
          detail);
    case LifecycleEventType::Suspended:
      return pick(std::array{"paused", "migrated", "I/O error", "watchdog", "restored",
                             "from snapshot", "API error", "post-copy", "post-copy failed"},
                  detail);
    case LifecycleEventType::Resumed:
      return pick(
          std::array{"unpaused", "migrated", "from snapshot", "post-copy", "post-copy failed"},
          detail);
    case LifecycleEventType::Stopped:
      return pick(std::array{"shutdown", "destroyed", "crashed", "migrated", "saved", "failed",
                             "from snapshot"},
                  detail);
    case LifecycleEventType::Shutdown:
      return pick(std::array{"finished", "by the guest", "by the host"}, detail);
    case LifecycleEventType::PMSuspended:
      return pick(std::array{"memory", "disk"}, detail);
    case LifecycleEventType::Crashed:
      return pick(std::array{"panicked", "crashloaded"}, detail);
    case LifecycleEventType::Unknown:
      break;
  }
  return nullptr;
}

}  // namespace

std::string describe(const LifecycleEvent& event) {
  std::string text = to_string(event.type);
  if (const char* detail = detail_name(event.type, event.detail))
    text += std::string(" (") + detail + ")";
  else
    text += " (detail " + std::to_string(event.detail) + ")";
  return text;
}

std::optional<DomainState> state_after(const LifecycleEvent& event) {
  switch (event.type) {
    case LifecycleEventType::Started:
    case LifecycleEventType::Resumed:
      return DomainState::Running;
    case LifecycleEventType::Suspended:
      return DomainState::Paused;
    case LifecycleEventType::Stopped:
      return DomainState::Shutoff;
    case LifecycleEventType::PMSuspended:
      return DomainState::PMSuspended;
    case LifecycleEventType::Crashed:
      return DomainState::Crashed;
    case LifecycleEventType::Defined:
    case LifecycleEventType::Undefined:
    case LifecycleEventType::Shutdown:
    case LifecycleEventType::Unknown:
      break;
  }
  return std::nullopt;
}

bool is_crash(const LifecycleEvent& event) {
  if (event.type == LifecycleEventType::Crashed) return true;
  return event.type == LifecycleEventType::Stopped &&
         (event.detail == VIR_DOMAIN_EVENT_STOPPED_CRASHED ||
          event.detail == VIR_DOMAIN_EVENT_STOPPED_FAILED);
}

// ---- subscriptions -----------------------------------------------------------------------

Subscription::Subscription(Subscription&& other) noexcept
    : cancel_(std::exchange(other.cancel_, nullptr)) {}

Subscription& Subscription::operator=(Subscription&& other) noexcept {
  if (this != &other) {
    reset();
    cancel_ = std::exchange(other.cancel_, nullptr);
  }
  return *this;
}

Subscription::~Subscription() {
  reset();
}

void Subscription::reset() {
  if (auto cancel = std::exchange(cancel_, nullptr)) cancel();
}

// ---- devices -----------------------------------------------------------------------------

bool passthrough_capable(const NodeDevice& device) {
  return device.kind == NodeDeviceKind::Usb || device.iommu_group.has_value();
}

DomainInfo Hypervisor::create_transient(const std::string&) {
  throw HypervisorError("cannot start a transient domain: not supported here", VIR_ERR_NO_SUPPORT);
}

std::vector<DhcpLease> Hypervisor::dhcp_leases() {
  throw HypervisorError("cannot read DHCP leases: not supported here", VIR_ERR_NO_SUPPORT);
}

std::vector<DomainStats> Hypervisor::all_domain_stats() {
  throw HypervisorError("cannot read domain statistics: not supported here", VIR_ERR_NO_SUPPORT);
}

int Hypervisor::open_graphics(const std::string& name, unsigned, bool) {
  throw HypervisorError("domain \"" + name + "\": cannot open the display: not supported here",
                        VIR_ERR_NO_SUPPORT);
}

namespace {
[[noreturn]] void no_snapshots(const std::string& domain, const char* action) {
  throw HypervisorError("domain \"" + domain + "\": cannot " + action + ": not supported here",
                        VIR_ERR_NO_SUPPORT);
}
}  // namespace

SnapshotInfo Hypervisor::create_snapshot(const std::string& domain, const std::string&,
                                         const std::string&) {
  no_snapshots(domain, "take a snapshot");
}
std::vector<SnapshotInfo> Hypervisor::snapshots(const std::string& domain) {
  no_snapshots(domain, "list snapshots");
}
bool Hypervisor::job_active(const std::string&) {
  return false;
}
void Hypervisor::revert_snapshot(const std::string& domain, const std::string&, bool) {
  no_snapshots(domain, "revert to a snapshot");
}
bool Hypervisor::delete_snapshot(const std::string& domain, const std::string&) {
  no_snapshots(domain, "delete a snapshot");
}
unsigned Hypervisor::freeze_filesystems(const std::string& domain) {
  no_snapshots(domain, "freeze the guest's filesystems");
}
void Hypervisor::thaw_filesystems(const std::string& domain) {
  no_snapshots(domain, "thaw the guest's filesystems");
}

void Hypervisor::managed_save(const std::string& name) {
  no_snapshots(name, "save its state");
}
bool Hypervisor::has_managed_save(const std::string& name) {
  no_snapshots(name, "look for a saved state");
}
bool Hypervisor::remove_managed_save(const std::string& name) {
  no_snapshots(name, "remove its saved state");
}

namespace {
[[noreturn]] void no_storage(const std::string& pool, const char* action) {
  throw HypervisorError("storage pool \"" + pool + "\": cannot " + action + ": not supported here",
                        VIR_ERR_NO_SUPPORT);
}
}  // namespace

std::string Hypervisor::pool_path(const std::string& pool) {
  no_storage(pool, "find its directory");
}
std::vector<VolumeInfo> Hypervisor::volumes(const std::string& pool) {
  no_storage(pool, "list volumes");
}
std::optional<VolumeInfo> Hypervisor::volume(const std::string& pool, const std::string&) {
  no_storage(pool, "find a volume");
}
VolumeInfo Hypervisor::create_volume(const std::string& pool, const NewVolume&) {
  no_storage(pool, "make a volume");
}
void Hypervisor::upload_volume(const std::string& pool, const std::string&, std::uint64_t,
                               const std::function<std::size_t(char*, std::size_t)>&) {
  no_storage(pool, "upload a volume");
}
std::string Hypervisor::download_volume(const std::string& pool, const std::string&, std::uint64_t,
                                        std::uint64_t) {
  no_storage(pool, "download a volume");
}
void Hypervisor::download_volume(const std::string& pool, const std::string&,
                                 const std::function<void(const char*, std::size_t)>&) {
  no_storage(pool, "download a volume");
}
void Hypervisor::resize_volume(const std::string& pool, const std::string&, std::uint64_t) {
  no_storage(pool, "resize a volume");
}
bool Hypervisor::delete_volume(const std::string& pool, const std::string&) {
  no_storage(pool, "delete a volume");
}

std::optional<std::string> Hypervisor::nwfilter_xml(const std::string& name) {
  throw HypervisorError("network filter \"" + name + "\": cannot look up: not supported here",
                        VIR_ERR_NO_SUPPORT);
}

bool Hypervisor::ensure_nwfilter(const std::string& name, const std::string&) {
  throw HypervisorError("network filter \"" + name + "\": cannot define: not supported here",
                        VIR_ERR_NO_SUPPORT);
}

}  // namespace bowline::libvirt
