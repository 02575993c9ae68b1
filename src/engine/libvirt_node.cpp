#include "engine/libvirt_node.hpp"

#include <filesystem>
#include <fstream>

#include "engine/devices.hpp"
#include "engine/engine_error.hpp"
#include "engine/guest_agent.hpp"
#include "engine/local_node_files.hpp"
#include "engine/traffic_filter.hpp"
#include "guest/cloud_init.hpp"
#include "libvirt/domain_xml.hpp"
#include "plan/change_parts.hpp"
#include "spec/boot_disk.hpp"
#include "spec/ipv4.hpp"
#include "util/tcp_connect.hpp"

namespace bowline::engine {

namespace fs = std::filesystem;

namespace {

plan::SpaceFacts facts_of(const store::Space& space, const store::Template& tmpl) {
  plan::SpaceFacts facts;
  facts.id = space.id;
  facts.name = space.name;
  if (space.ip) facts.ip = spec::Ipv4Address::parse(*space.ip);
  facts.uuid = space.uuid;
  facts.vnc_password = space.vnc_password;
  facts.template_name = tmpl.name;
  facts.template_id = std::to_string(tmpl.id);
  if (!space.host_key.empty())
    facts.host_key = plan::HostKeyPair{space.host_key, space.host_key_public};
  facts.terminal_key_public = space.terminal_key_public;
  facts.instance_id = space.instance_id;
  return facts;
}

// Whether the domain has a guest (running, paused or blocked): the space counts as running.
bool has_a_guest(const libvirt::DomainInfo& info) {
  return info.status.state == libvirt::DomainState::Running ||
         info.status.state == libvirt::DomainState::Paused ||
         info.status.state == libvirt::DomainState::Blocked;
}

// What is left says what a start can do (a restored store on a host without its domains).
Observation gone(const store::Space& space, bool files_left) {
  return {MachineState::Gone,
          "the domain " + space.domain_name + " vanished from libvirt" +
              (files_left ? "; its disk is still there, and a start defines it again"
                          : ", and its disk with it: restore the space's files under the images "
                            "path, or delete the space")};
}

}  // namespace

LibvirtNode::LibvirtNode(libvirt::Hypervisor& hypervisor, image::ImageCache& images,
                         image::Disks& disks, const HostProbe& host, LibvirtNodeSettings settings)
    : hypervisor_(hypervisor),
      images_(images),
      disks_(disks),
      host_(host),
      s_(std::move(settings)),
      own_files_(s_.files ? nullptr : std::make_unique<LocalNodeFiles>(disks_, s_.node)),
      files_(s_.files ? *s_.files : *own_files_),
      timer_(s_.timer ? *s_.timer : util::steady_timer()) {}

LibvirtNode::~LibvirtNode() {
  subscription_.reset();
}

plan::Plan LibvirtNode::plan_for(const NodeSpace& s) const {
  auto plan = plan::make_plan(s.spec, s.owner, facts_of(s.space, s.tmpl), s_.node);
  // The named disks are the owner's disk objects, whose files the engine resolved; the plan
  // alone names them by the layout of a preview.
  if (!s.disk_files.empty()) {
    if (s.disk_files.size() != s.spec.disks.size())
      throw std::invalid_argument("the space's disks are not all resolved to files");
    std::size_t next = 0;
    if (spec::boots_from_disk(s.spec)) plan.system_disk.path = s.disk_files[next++];
    for (auto& d : plan.data_disks) d.path = s.disk_files[next++];
  }
  return plan;
}

// --- admission --------------------------------------------------------------------------------

std::vector<std::string> LibvirtNode::refusals(const spec::Spec& spec) {
  std::vector<std::string> out;
  const bool bridged = spec.network.mode == spec::NetworkMode::Bridged;
  if (bridged && !host_.bridge_exists(spec.network.bridge))
    out.push_back("bridge " + spec.network.bridge +
                  " does not exist on this host (bowline node check says how to make one "
                  "safely), or use network.mode nat");
  if (!bridged && !hypervisor_.network_exists(spec.network.bridge))
    out.push_back("libvirt network " + spec.network.bridge + " does not exist on this host");
  if (spec.external && spec.external_method == spec::ExternalMethod::WholeIP && !bridged)
    out.push_back(
        "externalMethod WholeIP gives the VM an address of its own, which on this node only a "
        "bridged space has: use network.mode bridged, or PortList to publish the externalPorts "
        "on ports of this host");
  if (const auto wanted = passthrough_devices(spec); !wanted.empty())
    for (const auto& problem : device_problems(hypervisor_.node_devices(), wanted))
      out.push_back(problem);
  return out;
}

void LibvirtNode::check_machine_name(const std::string& machine) {
  // The images path also holds the image caches: a space must not take their directories.
  if (plan::is_reserved_directory(machine))
    throw EngineError(
        EngineError::Kind::Invalid,
        "the domain name \"" + machine + "\" is reserved for bowline's image directories");
  // A directory of that name is another tool's (a knot space sharing the images path) or a
  // leftover: its disk must never become this space's, nor be removed if this create fails.
  if (files_.any_left(machine))
    throw EngineError(EngineError::Kind::Conflict,
                      "files named for " + machine + " are in " + s_.node.images_path +
                          " on node " + s_.name +
                          ", and what is there belongs to no space of this server (a leftover, "
                          "or another tool's): move it away, or choose another name");
  if (auto existing = hypervisor_.lookup(machine))
    throw EngineError(EngineError::Kind::Conflict,
                      "libvirt already has a domain named " + machine +
                          (existing->metadata ? " (left by bowline; see the reconciler's report)"
                                              : " that bowline did not make"));
}

std::optional<std::string> LibvirtNode::fixed_address_refusal(const spec::Spec& spec) const {
  if (spec.network.mode == spec::NetworkMode::Bridged) return std::nullopt;
  return "a NAT space gets its address by DHCP";
}

// --- power ------------------------------------------------------------------------------------

namespace {

// A bring up's steps, in the order apply runs them, each at a percent above the one before
// (resolve_image's download takes kResolvingImage..kImageDownloaded).
constexpr int kResolvingImage = 5, kImageDownloaded = 65, kPreparingDisk = 70, kWritingSeed = 80,
              kDefiningDomain = 90, kStarting = 95;
static_assert(kResolvingImage < kImageDownloaded && kImageDownloaded < kPreparingDisk &&
                  kPreparingDisk < kWritingSeed && kWritingSeed < kDefiningDomain &&
                  kDefiningDomain < kStarting && kStarting < 100,
              "a bring up's progress follows the order of its steps");

}  // namespace

std::string LibvirtNode::resolve_image(const spec::Spec& spec, const Progress& progress) {
  progress.step("resolving image", kResolvingImage);
  int last_percent = -1;
  return images_.resolve(spec.image, [&](std::uint64_t done, std::uint64_t total) {
    const int percent = total ? static_cast<int>(done * 100 / total) : 0;
    if (percent != last_percent && percent % 5 == 0) {
      last_percent = percent;
      progress.download("downloading image",
                        kResolvingImage + percent * (kImageDownloaded - kResolvingImage) / 100,
                        done, total);
    }
  });
}

void LibvirtNode::prepare_disk(const plan::Plan& plan, const BaseImage& base,
                               const spec::Spec& spec, bool made_before) {
  const bool own_disk = spec::boots_from_disk(spec);
  // A space that ran before and lost its disk (a restored store, a file removed by hand) must
  // not boot a blank one in its place: its data would be gone without a word. Checked before
  // anything is made, so the space's directory stays as missing as it was.
  if (made_before && !own_disk && !files_.exists(plan.system_disk.path))
    throw EngineError(EngineError::Kind::Conflict,
                      "the space's disk is gone (" + plan.system_disk.path +
                          " is missing): restore it from a backup of the images path, or "
                          "delete the space");
  files_.make_space_place(plan);
  if (own_disk) {
    // disks[0] is the owner's disk object: the engine checked it exists; it is never made here.
    if (!files_.exists(plan.system_disk.path))
      throw EngineError(
          EngineError::Kind::NotFound,
          "the boot disk " + spec.disks[0].name + " has no file at " + plan.system_disk.path);
  } else if (!files_.exists(plan.system_disk.path)) {
    files_.create_overlay(base, plan.system_disk.path, spec.disk_bytes);
  } else if (spec.disk_bytes) {
    files_.grow(plan.system_disk.path, *spec.disk_bytes);
  }
  files_.tighten(plan);
}

// Every NIC is filtered before the domain is defined: by bowline's guard on this host, else
// through libvirt's nwfilter, whose filter is there and current before any NIC references it.
void LibvirtNode::guard(plan::Plan& plan) {
  if (!s_.guard) {
    ensure_traffic_filter(hypervisor_);
    add_dhcp_servers(plan, hypervisor_);
    return;
  }
  std::vector<GuardedNic> nics;
  for (auto& nic : plan.nics) {
    nic.filter = plan::NicFilter::Guard;
    nics.push_back({nic.tap, nic.mac, nic.ip,
                    nic.type == plan::NicType::Network ? nic.source : std::string()});
  }
  s_.guard->put(plan.domain_name, nics);
}

void LibvirtNode::define(const NodeSpace& s, plan::Plan& plan) {
  guard(plan);
  // Dedicated CPUs and GPUs: chosen and written into the domain under one lock.
  std::lock_guard placing(placement_mutex_);
  plan::place(plan, s.spec, place(s, plan));
  hypervisor_.define(
      libvirt::render_domain_xml(plan, libvirt::metadata_for(facts_of(s.space, s.tmpl), s.owner)));
  remember_network(plan.domain_name,
                   !plan.nics.empty() && plan.nics[0].type == plan::NicType::Network
                       ? plan.nics[0].source
                       : std::string());
}

void LibvirtNode::ensure_guarded(const std::string& domain) {
  // libvirt's nwfilter binds its rules at the start itself, or the start fails.
  if (s_.guard) s_.guard->ensure(domain);
}

void LibvirtNode::start_domain(const plan::Plan& plan) {
  if (hypervisor_.state(plan.domain_name).state == libvirt::DomainState::Running) return;
  carry_console_over(plan.domain_name, plan.console_log);
  ensure_guarded(plan.domain_name);
  libvirt::StartOptions options;
  options.reset_nvram =
      plan.firmware.bootloader == spec::Bootloader::Uefi && plan.firmware.reset_nvram_on_start;
  try {
    hypervisor_.start(plan.domain_name, options);
  } catch (const libvirt::HypervisorError&) {
    // libvirtd may still be finishing a start that this server asked for before it was
    // killed: refused as "already running" (operation-invalid from the QEMU driver, an
    // internal error from the test driver), it is what we wanted, not a failure.
    bool running = false;
    try {
      running = hypervisor_.state(plan.domain_name).state == libvirt::DomainState::Running;
    } catch (const std::exception&) {  // the start's own error says more
    }
    if (!running) throw;
  }
}

// image -> overlay -> seed -> define -> start. The domain is made at the first start only.
Applied LibvirtNode::apply(const NodeSpace& s, const Progress& progress, bool run) {
  if (!run) return {{MachineState::Stopped, ""}, false};
  // A space that boots from one of its owner's disks has no image to resolve.
  BaseImage base;
  if (!spec::boots_from_disk(s.spec)) base = files_.place_base(resolve_image(s.spec, progress));
  auto plan = plan_for(s);
  progress.step("preparing disk", kPreparingDisk);
  prepare_disk(plan, base, s.spec, s.space.applied_template_revision != 0);
  progress.step("writing cloud-init seed", kWritingSeed);
  files_.write_seed(plan, guest::seed_iso(plan.guest));
  progress.step("defining domain", kDefiningDomain);
  define(s, plan);
  hypervisor_.set_autostart(plan.domain_name, s.spec.run_strategy == spec::RunStrategy::Always);
  progress.applied();
  progress.step("starting", kStarting);
  start_domain(plan);
  files_.tighten(plan);  // the NVRAM libvirt made from its template at the first start
  return {{MachineState::Running, ""}, true};
}

bool LibvirtNode::wait_for_shutoff(const std::string& domain) {
  const auto deadline = timer_.now() + s_.stop_timeout;
  std::unique_lock lock(shutoff_mutex_);
  for (;;) {
    lock.unlock();
    const auto info = hypervisor_.lookup(domain);
    lock.lock();
    if (!info || info->status.state == libvirt::DomainState::Shutoff) return true;
    if (timer_.now() >= deadline) return false;
    // Woken by the lifecycle event; the timed wait is only a safety net for a missed event.
    timer_.wait_until(lock, shutoff_, std::min(deadline, timer_.now() + std::chrono::seconds(2)));
  }
}

Observation LibvirtNode::shut_down(const store::Space& space, const Progress& progress) {
  const auto info = hypervisor_.lookup(space.domain_name);
  if (!info) return {MachineState::Stopped, ""};
  if (info->status.state == libvirt::DomainState::Shutoff) {
    // A suspended space's stop forgets where it was: its next start boots afresh.
    discard_saved_state(space.domain_name);
    return {MachineState::Stopped, ""};
  }
  progress.step("shutting down", 10);
  try {
    hypervisor_.shutdown(space.domain_name);
  } catch (const libvirt::HypervisorError&) {
    // Not running any more, or no ACPI: destroy below decides.
  }
  if (!wait_for_shutoff(space.domain_name)) {
    progress.step("forcing off after the stop timeout", 80);
    hypervisor_.destroy(space.domain_name);
  }
  return {MachineState::Stopped, ""};
}

Observation LibvirtNode::restart(const NodeSpace& s, const Progress& progress) {
  shut_down(s.space, progress.part(0, 30));
  progress.booting();
  return apply(s, progress.part(30, 100), true).seen;
}

// libvirt autostarts a domain when libvirtd starts (a host reboot): only while its space is to
// run. A user's stop turns it off; the next start turns it on again for runStrategy Always.
void LibvirtNode::stay_off(const store::Space& space) {
  try {
    if (const auto info = hypervisor_.lookup(space.domain_name); info && info->autostart)
      hypervisor_.set_autostart(space.domain_name, false);
  } catch (const libvirt::HypervisorError& e) {
    if (!e.is_no_domain()) throw;
  }
}

void LibvirtNode::tear_down(const store::Space& space) {
  try {
    hypervisor_.destroy(space.domain_name);
  } catch (const libvirt::HypervisorError& e) {
    if (!e.is_no_domain() && !e.is_operation_invalid()) throw;
  }
  // The space's disk objects outlive it: their snapshots' data must not.
  try {
    delete_all_snapshots(space.domain_name);
  } catch (const libvirt::HypervisorError&) {
    // The space's own overlay goes with its directory below; the domain goes regardless.
  }
  hypervisor_.undefine(space.domain_name);
  remember_network(space.domain_name, "");
  {
    std::lock_guard lock(snapshot_locks_mutex_);
    snapshot_locks_.erase(space.domain_name);
  }
  if (s_.guard) s_.guard->remove(space.domain_name);
  files_.remove_space(space.domain_name);
}

void LibvirtNode::personalise(const NodeSpace& s, const std::string& previous_user) {
  const auto plan = plan_for(s);
  GuestIdentity identity;
  identity.username = plan.guest.username;
  identity.ssh_keys = plan.guest.ssh_keys;
  identity.password_hash = plan.guest.password_hash;
  identity.hostname = plan.guest.hostname;
  identity.previous_user = previous_user;
  const AgentCall agent = [this, domain = s.space.domain_name](const std::string& json,
                                                               std::chrono::seconds t) {
    return hypervisor_.agent_command(domain, json, t);
  };
  // A member resumed for its claim: its agent's channel comes back a moment after the guest.
  if (const auto patience = agent_patience(s.space.domain_name); patience.count() > 0)
    wait_for_agent(agent, patience);
  apply_identity(agent, identity);
  // The seed now describes the owner too: a later boot keeps them.
  files_.write_seed(plan, guest::seed_iso(plan.guest));
}

// --- watching ---------------------------------------------------------------------------------

void LibvirtNode::watch(std::function<void(const MachineEvent&)> on_event) {
  subscription_ = hypervisor_.subscribe(
      [this, on_event = std::move(on_event)](const libvirt::LifecycleEvent& e) {
        { std::lock_guard lock(shutoff_mutex_); }
        shutoff_.notify_all();
        MachineEvent event;
        event.machine = e.domain;
        if (const auto after = libvirt::state_after(e))
          event.state = *after == libvirt::DomainState::Shutoff ? MachineState::Stopped
                                                                : MachineState::Running;
        event.crash = libvirt::is_crash(e);
        event.description = libvirt::describe(e);
        on_event(event);
      });
}

void LibvirtNode::unwatch() {
  subscription_.reset();
}

Observation LibvirtNode::observe(const store::Space& space) {
  const auto info = hypervisor_.lookup(space.domain_name);
  if (!info) return gone(space, files_.any_left(space.domain_name));
  // QEMU stopped the vCPU on an error: the guest will not go on by itself, and a wait for its
  // boot would wait for ever (KVM's "emulation failure" on a host whose KVM cannot run it).
  if (const auto why = libvirt::paused_by_error(info->status); !why.empty())
    return {MachineState::Failed,
            "QEMU paused the guest (" + why + "); the domain's log under /var/log/libvirt/qemu/" +
                " has QEMU's words" +
                (s_.node.domain_type == plan::DomainType::Kvm
                     ? ". Under KVM this is usually \"KVM internal error ... emulation "
                       "failure\": this host's KVM cannot run the guest; set server.domain_type "
                       "qemu (or auto) and start the space again"
                     : std::string())};
  // A revert that a stopped server began and nobody finished: bowline's restore always ends
  // with the machine off or resumed, and the interrupted one promised off (the operation said
  // so), so off it goes rather than count as a running space that never runs.
  if (libvirt::paused_by_revert(info->status)) {
    hypervisor_.destroy(space.domain_name);
    return {MachineState::Stopped, ""};
  }
  if (has_a_guest(*info)) return {MachineState::Running, ""};
  return {has_saved_state(space.domain_name) ? MachineState::Suspended : MachineState::Stopped, ""};
}

std::vector<Orphan> LibvirtNode::orphans(const std::set<std::string>& known) {
  std::vector<Orphan> out;
  for (const auto& domain : hypervisor_.list())
    if (domain.metadata && !known.count(domain.name))
      out.push_back({"domain:" + domain.name,
                     {{"domain", domain.name}, {"space", domain.metadata->space_id}}});
  std::error_code ec;
  if (files_.side_by_side()) return out;  // a pool's files: not listed as orphans yet
  for (const auto& entry : fs::directory_iterator(s_.node.images_path, ec)) {
    const auto name = entry.path().filename().string();
    if (entry.is_directory() && !known.count(name) && !plan::is_reserved_directory(name) &&
        fs::exists(entry.path() / "seed.iso"))
      out.push_back({"dir:" + entry.path().string(), {{"directory", entry.path().string()}}});
  }
  return out;
}

std::optional<Readiness> LibvirtNode::readiness(const store::Space& space) {
  return parse_readiness(files_.console_tail(space.domain_name, 256 * 1024));
}

std::optional<std::map<std::string, std::string>> LibvirtNode::parts(const NodeSpace& s) {
  const auto plan = plan_for(s);
  return plan::change_parts(s.spec, plan);
}

// --- access -----------------------------------------------------------------------------------

std::string LibvirtNode::own_domain(const store::Space& space) {
  // A domain of that name that another space made (or nobody we know) is not this space's.
  const auto info = hypervisor_.lookup(space.domain_name);
  if (info && info->metadata && info->metadata->space_id != space.id)
    throw EngineError(EngineError::Kind::Conflict,
                      "the domain " + space.domain_name + " belongs to another space");
  return space.domain_name;
}

std::unique_ptr<util::ByteStream> LibvirtNode::open_console(const store::Space& space) {
  return hypervisor_.open_console(own_domain(space), {}, true);
}

int LibvirtNode::open_display(const store::Space& space) {
  capabilities().require(Capability::Vnc, s_.name);
  return hypervisor_.open_graphics(own_domain(space), 0, true);
}

int LibvirtNode::open_port(const store::Space& space, std::uint16_t port,
                           std::chrono::milliseconds timeout) {
  capabilities().require(Capability::Tunnel, s_.name);
  // Decided now, not taken from an earlier answer: the guest's lease may have changed.
  FoundAddress to;
  try {
    to = find_address(space);
  } catch (const libvirt::HypervisorError& e) {
    throw EngineError(EngineError::Kind::Conflict,
                      "the space's address cannot be read now: " + std::string(e.what()));
  }
  if (!to.address) throw EngineError(EngineError::Kind::Conflict, to.why_not);
  if (s_.connect) return s_.connect(*to.address, port, timeout);
  return util::tcp_connect(*to.address, port, timeout);
}

std::optional<std::string> LibvirtNode::unreachable() {
  try {
    hypervisor_.list();
    return std::nullopt;
  } catch (const std::exception& e) {
    return e.what();
  }
}

nlohmann::json LibvirtNode::report() {
  auto record = s_.report ? s_.report()
                          : nlohmann::json{{"runtimes", nlohmann::json::array()},
                                           {"checks", nlohmann::json::array()}};
  if (!record.contains("name")) record["name"] = s_.name;
  if (!record.contains("kind")) record["kind"] = kind();
  return record;
}

}  // namespace bowline::engine
