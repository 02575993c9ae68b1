// The Hypervisor seam: everything the engine asks of a virtualisation host, in our own types.
// LibvirtHypervisor (libvirt_hypervisor.hpp) implements it over the libvirt C API; libvirt's
// `test:///default` driver makes that implementation a fast double for tests.
//
// Domains are named by their libvirt name. Every call is safe from any thread. Failures throw
// HypervisorError, whose message names the object and the cause, e.g.
//   domain "alice-dev": cannot start: Requested operation is not valid: domain is already running
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "libvirt/domain_xml.hpp"
#include "util/byte_stream.hpp"
#include "util/upstream_error.hpp"

namespace bowline::libvirt {

// ---- errors ------------------------------------------------------------------------------

class HypervisorError : public util::UpstreamError {
 public:
  // `code` and `error_domain` are libvirt's virErrorNumber and virErrorDomain (0 when the
  // error is ours, not libvirt's); `cause` is libvirt's own message.
  HypervisorError(const std::string& message, int code = 0, int error_domain = 0,
                  std::string cause = {});

  int code() const noexcept { return code_; }
  int error_domain() const noexcept { return error_domain_; }
  const std::string& cause() const noexcept { return cause_; }

  bool is_no_domain() const noexcept;          // VIR_ERR_NO_DOMAIN
  bool is_no_network() const noexcept;         // VIR_ERR_NO_NETWORK
  bool is_operation_invalid() const noexcept;  // e.g. starting a running domain
  bool is_unsupported() const noexcept;        // the driver cannot do it (or not with these flags)
  bool is_agent_unavailable() const noexcept;  // no guest agent, or it did not answer in time

 private:
  int code_;
  int error_domain_;
  std::string cause_;
};

// ---- domains -----------------------------------------------------------------------------

// libvirt's virDomainState.
enum class DomainState {
  NoState,
  Running,
  Blocked,
  Paused,
  ShuttingDown,
  Shutoff,
  Crashed,
  PMSuspended,
  Unknown
};
const char* to_string(DomainState state);

struct DomainStatus {
  DomainState state = DomainState::NoState;
  int reason = 0;  // libvirt's vir<State>Reason for that state (e.g. VIR_DOMAIN_SHUTOFF_CRASHED)
};

// Why QEMU itself paused a guest on an error ("I/O error", "crashed", "internal error": KVM's
// "emulation failure" shows as libvirt's unknown reason), or empty when nothing went wrong
// (not paused, or paused by someone: a user, a snapshot, a save, a migration).
std::string paused_by_error(const DomainStatus& status);
// Whether a revert to a snapshot left the guest paused (libvirt's "from snapshot" reason).
bool paused_by_revert(const DomainStatus& status);

struct DomainInfo {
  std::string name;
  std::string uuid;  // lowercase, with dashes
  DomainStatus status;
  bool persistent = false;
  bool autostart = false;
  // Our <metadata> element (namespace kMetadataNamespace); nullopt: not bowline's domain.
  std::optional<DomainMetadata> metadata;
};

struct StartOptions {
  bool paused = false;       // VIR_DOMAIN_START_PAUSED: attach the console, then resume()
  bool reset_nvram = false;  // VIR_DOMAIN_START_RESET_NVRAM: fresh UEFI variables
};

// ---- lifecycle events --------------------------------------------------------------------

// libvirt's virDomainEventType.
enum class LifecycleEventType {
  Defined,
  Undefined,
  Started,
  Suspended,
  Resumed,
  Stopped,
  Shutdown,
  PMSuspended,
  Crashed,
  Unknown
};
const char* to_string(LifecycleEventType type);

struct LifecycleEvent {
  std::string domain;  // name
  std::string uuid;
  LifecycleEventType type = LifecycleEventType::Unknown;
  int detail =
      0;  // libvirt's virDomainEvent<Type>DetailType, e.g. VIR_DOMAIN_EVENT_STOPPED_CRASHED
};

// "stopped (destroyed)", "started (booted)", ...
std::string describe(const LifecycleEvent& event);
// The state the domain is in after the event; nullopt for events that do not change it
// (defined, undefined, a shutdown that has only begun).
std::optional<DomainState> state_after(const LifecycleEvent& event);
// A stop the guest or QEMU caused rather than someone's shutdown/destroy: crashed or failed.
bool is_crash(const LifecycleEvent& event);

// Called on the hypervisor's event thread; keep it short (hand work to another thread) and
// don't throw (an exception is dropped).
using LifecycleCallback = std::function<void(const LifecycleEvent&)>;

// Stops delivery when destroyed or reset(); once that returns, the callback is not running
// and will not run again (except when reset() is called from inside the callback itself).
// Don't destroy it while holding a lock that the callback takes.
class Subscription {
 public:
  Subscription() = default;
  explicit Subscription(std::function<void()> cancel) : cancel_(std::move(cancel)) {}
  Subscription(Subscription&& other) noexcept;
  Subscription& operator=(Subscription&& other) noexcept;
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;
  ~Subscription();

  void reset();
  explicit operator bool() const noexcept { return static_cast<bool>(cancel_); }

 private:
  std::function<void()> cancel_;
};

// ---- guest addresses ---------------------------------------------------------------------

// VIR_DOMAIN_INTERFACE_ADDRESSES_SRC_*: the DHCP leases of the domain's networks only. The
// guest agent's list is not offered: what a guest says of itself is never where bowline
// connects (engine/guest_address.hpp).
enum class AddressSource { Lease };

struct InterfaceAddress {
  std::string interface;  // the host-side name
  std::string mac;
  std::string address;
  unsigned prefix = 0;
  bool ipv6 = false;
};

// ---- networks ----------------------------------------------------------------------------

// One DHCP lease a libvirt network's dnsmasq handed out (virNetworkGetDHCPLeases).
struct DhcpLease {
  std::string network;
  std::string mac;  // lower case, as libvirt writes it
  std::string address;
  bool ipv6 = false;
  std::int64_t expiry = 0;  // seconds since the epoch
};

struct NetworkInfo {
  std::string name;
  std::string uuid;
  bool active = false;
  bool persistent = false;
  bool autostart = false;
  std::string bridge;  // empty when the network has none
  // The IPv4 addresses of the network's own DHCP server: each <ip> with a <dhcp> element.
  std::vector<std::string> dhcp_servers = {};
  // Its dnsmasq has dhcp-ignore-clid: one lease per MAC, whatever client ids a guest sends.
  bool one_lease_per_mac = false;
};

// ---- node devices ------------------------------------------------------------------------

enum class NodeDeviceKind { Pci, Usb };

struct NodeDevice {
  NodeDeviceKind kind = NodeDeviceKind::Pci;
  std::string name;    // libvirt's: pci_0000_01_00_0, usb_1_2
  std::string parent;  // e.g. "computer", "pci_0000_00_14_0"
  std::string driver;  // the host driver bound to it ("vfio-pci", "xhci_hcd"); empty if none
  std::uint32_t vendor_id = 0, product_id = 0;
  std::string vendor, product;  // names, when libvirt knows them
  // PCI
  std::uint32_t pci_domain = 0, pci_bus = 0, pci_slot = 0, pci_function = 0;
  std::uint32_t pci_class = 0;               // e.g. 0x030000 for a VGA controller
  std::optional<std::uint32_t> iommu_group;  // none: cannot be passed through
  // USB
  std::uint32_t usb_bus = 0, usb_device = 0;
};

// PCI needs an IOMMU group for VFIO; a USB device can always be handed over.
bool passthrough_capable(const NodeDevice& device);

// ---- host capability ---------------------------------------------------------------------

struct DomainCapabilities {
  std::string domain_type;    // "kvm", "qemu", ...
  bool supported = false;     // QEMU (or the driver) can run domains of this type here
  std::string reason;         // why not, when !supported
  bool requires_kvm = false;  // the type needs /dev/kvm (checked by the caller, not here)
  std::string emulator;       // /usr/bin/qemu-system-x86_64
  std::string machine;        // default machine type, e.g. pc-i440fx-7.2
  std::string arch;           // x86_64
  unsigned max_vcpus = 0;
  std::vector<std::string> firmware;  // auto-selectable firmware, e.g. {"efi"}
};

// ---- resource counters -------------------------------------------------------------------

// One disk's counters since its domain started (libvirt's block.<n>.*).
struct DiskCounters {
  std::string name;  // the target: "vda", "sda"
  std::uint64_t read_bytes = 0, write_bytes = 0, read_requests = 0, write_requests = 0;
};

// One NIC's counters since its domain started (libvirt's net.<n>.*), as the guest sees them:
// rx is what the guest received.
struct NicCounters {
  std::string name;  // the host-side device: "vnet3"
  std::uint64_t rx_bytes = 0, tx_bytes = 0;
};

// A running domain's statistics as libvirt reports them in one virConnectGetAllDomainStats
// call. What the driver did not report is nullopt: the test driver reports the state alone,
// and the balloon's guest figures (available, unused, disk caches) need the guest's
// virtio-balloon driver and the balloon's stats period.
struct DomainStats {
  std::string name;
  DomainStatus status;
  std::optional<std::uint64_t> cpu_time_ns;  // cpu.time: vCPUs and QEMU's own threads
  std::optional<unsigned> vcpus;             // vcpu.current
  // balloon.*, in KiB: the balloon's size (what the guest has now), its maximum, what the
  // guest sees as usable in all, of which free and page cache, and QEMU's resident set.
  std::optional<std::uint64_t> balloon_current_kib, balloon_maximum_kib, balloon_available_kib,
      balloon_unused_kib, balloon_disk_caches_kib, balloon_rss_kib;
  std::vector<DiskCounters> disks;
  std::vector<NicCounters> nics;
};

// ---- snapshots ---------------------------------------------------------------------------

// One of a domain's snapshots as libvirt holds it. Internal qcow2 snapshots: the data lives in
// the domain's qcow2 files, libvirt keeps the metadata (virDomainSnapshot*).
struct SnapshotInfo {
  std::string name;
  std::string description;
  DomainState state = DomainState::Shutoff;  // the domain's when it was taken
  bool memory = false;                       // it holds the running state too
  std::int64_t created_at = 0;               // seconds since the epoch
};

// A volume of a libvirt storage pool, as the pool's host has it.
struct VolumeInfo {
  std::string name;
  std::string path;              // on the pool's host
  std::uint64_t capacity = 0;    // what the guest sees (for a plain file, its size)
  std::uint64_t allocation = 0;  // what it takes on the host
};

// A volume to make (create_volume): a qcow2 on a backing file, an empty qcow2, or a raw file
// of `capacity` bytes that an upload fills.
struct NewVolume {
  std::string name;
  std::string format = "qcow2";  // qcow2 | raw
  std::uint64_t capacity = 0;
  std::string backing_path;  // on the pool's host; empty: none
  std::string backing_format = "qcow2";
  unsigned mode = 0600;  // the file's permissions on the host
};

// ---- the seam ----------------------------------------------------------------------------

class Hypervisor {
 public:
  virtual ~Hypervisor() = default;

  virtual std::string uri() const = 0;

  // Defines (or redefines, same name and UUID) a persistent domain, validating the XML
  // against libvirt's schema (VIR_DOMAIN_DEFINE_VALIDATE). Returns the defined domain.
  // Another domain with the same name but a different UUID is an error.
  virtual DomainInfo define(const std::string& xml) = 0;
  virtual void start(const std::string& name, StartOptions options = {}) = 0;
  virtual void resume(const std::string& name) = 0;
  // Asks the guest to power off (ACPI power button; a driver that has no such choice, like
  // the test driver, uses its own way) and returns at once: watch for the Stopped event.
  virtual void shutdown(const std::string& name) = 0;
  // Pulls the plug. Returns false when the domain was not running (nothing to do); throws
  // (is_no_domain) when there is no such domain.
  virtual bool destroy(const std::string& name) = 0;
  // Removes the definition with its NVRAM, managed save image and snapshot/checkpoint
  // metadata. Returns false when there was no such domain. A running domain keeps running
  // as a transient one: destroy it first.
  virtual bool undefine(const std::string& name) = 0;
  // Starts a transient domain that libvirt destroys when this connection closes
  // (VIR_DOMAIN_START_AUTODESTROY): for throwaway probes, never for spaces. Implementations
  // that cannot throw an is_unsupported() error (the default).
  virtual DomainInfo create_transient(const std::string& xml);

  virtual std::optional<DomainInfo> lookup(const std::string& name) = 0;
  virtual std::vector<DomainInfo> list() = 0;  // every domain on the host, bowline's or not
  // Statistics of every running domain on the host, bowline's or not, in one call to libvirt
  // (virConnectGetAllDomainStats with the state, total CPU, vCPU, balloon, block and
  // interface groups), never one call per domain: for a sampler that asks every few seconds.
  // Implementations that cannot throw an is_unsupported() error (the default).
  virtual std::vector<DomainStats> all_domain_stats();
  virtual DomainStatus state(const std::string& name) = 0;
  virtual void set_autostart(const std::string& name, bool autostart) = 0;
  // The domain's XML: the live one while it runs, unless `inactive` (the next boot's).
  virtual std::string domain_xml(const std::string& name, bool inactive = false) = 0;

  // One entry per address; the domain must be running.
  virtual std::vector<InterfaceAddress> interface_addresses(const std::string& name,
                                                            AddressSource source) = 0;
  // Sends a QEMU guest agent command (JSON) and returns the agent's JSON reply, or throws
  // (is_agent_unavailable) when the agent has not answered within `timeout`.
  virtual std::string agent_command(const std::string& name, const std::string& json,
                                    std::chrono::seconds timeout) = 0;

  virtual Subscription subscribe(LifecycleCallback callback) = 0;

  virtual std::optional<NetworkInfo> lookup_network(const std::string& name) = 0;
  virtual std::vector<NetworkInfo> list_networks() = 0;
  // The DHCP leases of every active network: one pass for the whole host, so a list of
  // spaces need not ask domain by domain. Implementations that cannot throw an
  // is_unsupported() error (the default; libvirt's test driver has no leases either).
  virtual std::vector<DhcpLease> dhcp_leases();
  bool network_exists(const std::string& name) { return lookup_network(name).has_value(); }
  bool network_active(const std::string& name) {
    const auto network = lookup_network(name);
    return network && network->active;
  }

  // Network filters (libvirt's nwfilter driver, which the test driver lacks: these throw an
  // is_unsupported() error there, and by default). The filter's definition as libvirt holds
  // it; nullopt when there is no filter of that name.
  virtual std::optional<std::string> nwfilter_xml(const std::string& name);
  // Defines the filter `xml` (whose name is `name`) unless libvirt holds the same definition
  // already (same_filter in nwfilter.hpp); one it replaces keeps its UUID. Returns whether it
  // defined it. Running domains that use it get the new rules at once (libvirt's doing).
  virtual bool ensure_nwfilter(const std::string& name, const std::string& xml);

  // PCI and USB devices of the host, for passthrough checks.
  virtual std::vector<NodeDevice> node_devices() = 0;
  // The host's free memory in bytes (virNodeGetFreeMemory); nullopt where the driver does not
  // say (the default).
  virtual std::optional<std::uint64_t> free_memory() { return std::nullopt; }
  // Never throws for "this host cannot": that is {supported = false, reason}.
  virtual DomainCapabilities domain_capabilities(const std::string& domain_type) = 0;

  // Snapshots (libvirt's snapshot API; the defaults throw an is_unsupported() error). An
  // internal snapshot of every qcow2 disk: of a shut-off domain its disks alone, of a running
  // one its disks and memory (libvirt takes a running domain's internal snapshot with its
  // memory, always). Atomic: a failure leaves no snapshot. Read-only disks (the seed) are left
  // out.
  virtual SnapshotInfo create_snapshot(const std::string& domain, const std::string& name,
                                       const std::string& description);
  virtual std::vector<SnapshotInfo> snapshots(const std::string& domain);  // oldest first
  // Whether libvirt runs a long job on the domain now (a snapshot, a save, a migration), which
  // may change its snapshots when it ends. False by default and for a domain that is not there.
  virtual bool job_active(const std::string& domain);
  // Puts the domain back as the snapshot has it: its disks, its definition, and a running
  // snapshot's running state (paused instead with `paused`).
  virtual void revert_snapshot(const std::string& domain, const std::string& name, bool paused);
  // Removes the snapshot and its data from the disks; false when there was none.
  virtual bool delete_snapshot(const std::string& domain, const std::string& name);
  // Freezes the running guest's filesystems through its agent (virDomainFSFreeze) and returns
  // how many; throws (is_agent_unavailable) when the agent does not answer, within the
  // implementation's bound on every agent call (LibvirtOptions::agent_timeout). Thaw undoes it.
  virtual unsigned freeze_filesystems(const std::string& domain);
  virtual void thaw_filesystems(const std::string& domain);

  // Managed save (libvirt's own suspend to disk; the defaults throw is_unsupported()): the
  // running domain's memory and devices go to a file libvirt keeps, QEMU exits, and the next
  // start() restores it where it was. An undefine removes the file too.
  virtual void managed_save(const std::string& name);
  virtual bool has_managed_save(const std::string& name);
  // Forgets the saved state (the next start boots afresh); false when there was none.
  virtual bool remove_managed_save(const std::string& name);

  // The domain's serial console (`device`: a console alias such as "serial0"; empty: the
  // first console). With `force`, takes it over from another client.
  virtual std::unique_ptr<util::ByteStream> open_console(const std::string& name,
                                                         const std::string& device = {},
                                                         bool force = true) = 0;

  // A socket connected to the domain's graphics device number `index` (its VNC server), for
  // the caller to own and close. With `skip_auth` QEMU asks for no password on it
  // (VIR_DOMAIN_OPEN_GRAPHICS_SKIPAUTH): no TCP port is involved at all. The domain must be
  // running. Implementations that cannot throw an is_unsupported() error (the default).
  virtual int open_graphics(const std::string& name, unsigned index = 0, bool skip_auth = true);

  // Storage pools and their volumes (libvirt's storage API; the defaults throw is_unsupported()):
  // how a node on another host keeps files, its file system not being the server's.
  // The pool's directory on its host (an inactive pool is started first).
  virtual std::string pool_path(const std::string& pool);
  // The pool's volumes as its host has them now (the pool is refreshed first).
  virtual std::vector<VolumeInfo> volumes(const std::string& pool);
  // nullopt when the pool has no volume of that name.
  virtual std::optional<VolumeInfo> volume(const std::string& pool, const std::string& name);
  // The pool's host makes it (a qcow2 on a backing file: its qemu-img); an existing volume of
  // that name is an error.
  virtual VolumeInfo create_volume(const std::string& pool, const NewVolume& volume);
  // Replaces the volume's bytes from offset 0 with `size` bytes that `read` fills (it returns
  // how many it wrote, 0 at the end), through a libvirt stream.
  virtual void upload_volume(const std::string& pool, const std::string& name, std::uint64_t size,
                             const std::function<std::size_t(char*, std::size_t)>& read);
  // `length` bytes of the volume from `offset` (0: to its end).
  virtual std::string download_volume(const std::string& pool, const std::string& name,
                                      std::uint64_t offset, std::uint64_t length);
  // The whole volume, handed to `sink` a chunk at a time (a big disk never sits in memory).
  virtual void download_volume(const std::string& pool, const std::string& name,
                               const std::function<void(const char*, std::size_t)>& sink);
  virtual void resize_volume(const std::string& pool, const std::string& name,
                             std::uint64_t capacity);
  // Removes the volume; false when there was none.
  virtual bool delete_volume(const std::string& pool, const std::string& name);
};

}  // namespace bowline::libvirt
