#include "engine/engine.hpp"

#include <filesystem>
#include <fstream>

#include <vector>

#include "engine/devices.hpp"
#include "engine/event_kinds.hpp"
#include "engine/identifiers.hpp"
#include "engine/ipam.hpp"
#include "guest/cloud_init.hpp"
#include "libvirt/domain_xml.hpp"
#include "plan/change_parts.hpp"
#include "spec/loader.hpp"
#include "spec/validators.hpp"

namespace bowline::engine {

namespace fs = std::filesystem;
using store::SpaceState;

namespace {}  // namespace

namespace {

// An unclaimed pool member has no owner: its guest user is "pool" until someone claims it.
plan::Owner user_of(const store::Space& space, const store::User& owner) {
  if (!space.owner_id) return plan::Owner{"pool", "", "", "", std::nullopt, {}};
  return plan::Owner{owner.username,         owner.email,
                     owner.timezone,         std::to_string(owner.id),
                     owner.service_password, owner.ssh_keys};
}

plan::SpaceFacts facts_of(const store::Space& space, const store::Template& tmpl) {
  plan::SpaceFacts facts;
  facts.id = space.id;
  facts.name = space.name;
  if (space.ip) facts.ip = spec::Ipv4Address::parse(*space.ip);
  facts.uuid = space.uuid;
  facts.vnc_password = space.vnc_password;
  facts.template_name = tmpl.name;
  facts.template_id = std::to_string(tmpl.id);
  return facts;
}

}  // namespace

// Rewrites the seed only when its bytes change (a rename: a booting guest never sees half).
void write_seed(const plan::Plan& plan) {
  const auto iso = guest::seed_iso(plan.guest);
  std::string current;
  if (std::ifstream in{plan.seed_iso, std::ios::binary})
    current.assign(std::istreambuf_iterator<char>(in), {});
  if (current == iso) return;
  const auto tmp = plan.seed_iso + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  out.write(iso.data(), static_cast<std::streamsize>(iso.size()));
  out.close();
  if (!out) throw std::runtime_error("cannot write " + tmp);
  fs::rename(tmp, plan.seed_iso);
}

plan::Plan Engine::plan_for(const Loaded& l) {
  return plan::make_plan(l.spec, user_of(l.space, l.owner), facts_of(l.space, l.tmpl),
                         settings_.node);
}

Engine::Engine(store::Store& store, libvirt::Hypervisor& hypervisor, image::ImageCache& images,
               image::Disks& disks, const HostProbe& host, EventBus& events,
               EngineSettings settings)
    : store_(store),
      hypervisor_(hypervisor),
      images_(images),
      disks_(disks),
      host_(host),
      events_(events),
      settings_(std::move(settings)),
      timer_(settings_.timer ? *settings_.timer : util::steady_timer()),
      executor_(settings_.workers) {}

Engine::~Engine() {
  subscription_.reset();
  {
    std::lock_guard lock(audit_mutex_);
    audit_stop_ = true;
  }
  audit_wake_.notify_all();
  if (auditor_.joinable()) auditor_.join();
  {
    std::lock_guard lock(forwards_mutex_);
    publisher_stop_ = true;
  }
  publisher_wake_.notify_all();
  if (publisher_.joinable()) publisher_.join();
  executor_.drain();
}

void Engine::start() {
  subscription_ =
      hypervisor_.subscribe([this](const libvirt::LifecycleEvent& e) { on_lifecycle(e); });
  reconcile();
  // What a previous server published is replaced as each running space's address is known.
  for (const auto& space : store_.spaces().list())
    if (space.state == SpaceState::Running && !is_remote(space)) publish_ports(space.id);
  if (settings_.reconcile_interval.count() > 0) auditor_ = std::thread([this] { audit_loop(); });
}

void Engine::audit_loop() {
  std::unique_lock lock(audit_mutex_);
  auto next = timer_.now() + settings_.reconcile_interval;
  while (!audit_stop_) {
    if (!timer_.wait_until(lock, audit_wake_, next)) continue;
    next = timer_.now() + settings_.reconcile_interval;
    lock.unlock();
    try {
      audit();
    } catch (const std::exception& e) {
      events_.publish(event::kReconcileError, std::nullopt, {{"error", e.what()}});
    }
    lock.lock();
  }
}

void Engine::wait_idle() {
  executor_.drain();
}

store::Space Engine::require(const std::string& id) {
  auto space = store_.spaces().get(id);
  if (!space) throw EngineError(EngineError::Kind::NotFound, "no space with id " + id);
  return *space;
}

void Engine::set_state(const std::string& id, SpaceState state, const std::string& error) {
  store_.spaces().set_state(id, state, error);
  nlohmann::json payload = {{"state", store::to_string(state)}};
  if (!error.empty()) payload["error"] = error;
  events_.publish(event::kSpaceState, id, payload);
}

void Engine::progress(std::int64_t operation, const std::string& id, const std::string& step,
                      int percent) {
  store_.operations().progress(operation, step, percent);
  events_.publish(event::kOperationProgress, id,
                  {{"operation", operation}, {"step", step}, {"progress", percent}});
}

Engine::Loaded Engine::load(const store::Space& space) {
  Loaded l{space, {}, {}, {}};
  auto tmpl = store_.templates().get(space.template_id);
  if (!tmpl) throw EngineError(EngineError::Kind::NotFound, "the space's template is gone");
  l.tmpl = *tmpl;
  if (space.owner_id) {
    auto owner = store_.users().get(*space.owner_id);
    if (!owner) throw EngineError(EngineError::Kind::NotFound, "the space's owner is gone");
    l.owner = *owner;
  }
  l.spec = space_spec(space);
  return l;
}

spec::Spec Engine::space_spec(const store::Space& space) {
  auto tmpl = store_.templates().get(space.template_id);
  if (!tmpl) throw EngineError(EngineError::Kind::NotFound, "the space's template is gone");
  std::optional<store::User> owner;
  if (space.owner_id) owner = store_.users().get(*space.owner_id);
  spec::Variables values = settings_.server_variables;
  values["user.username"] = owner ? owner->username : "pool";
  values["user.email"] = owner ? owner->email : "";
  values["user.timezone"] = owner ? owner->timezone : "";
  values["user.id"] = owner ? std::to_string(owner->id) : "";
  values["space.name"] = space.name;
  values["space.id"] = space.id;
  values["space.ip_address"] = space.ip.value_or("");
  values["template.name"] = tmpl->name;
  values["template.id"] = std::to_string(tmpl->id);
  auto result = spec::load_spec(tmpl->yaml, &values);
  if (!result.spec) {
    std::string message = "template \"" + tmpl->name + "\" does not expand for this space:";
    for (const auto& d : result.diagnostics.sorted())
      if (d.severity == spec::Severity::Error) message += " " + spec::format(d, tmpl->name);
    throw EngineError(EngineError::Kind::Invalid, message);
  }
  // A domain keeps the name it was made with: a template whose name changed, or a pool member
  // claimed under a new name, is the same domain (its disk, NVRAM and console are there).
  if (!space.domain_name.empty()) result.spec->name = space.domain_name;
  return *result.spec;
}

void Engine::check_devices_exist(const spec::Spec& spec) {
  const auto wanted = passthrough_devices(spec);
  if (wanted.empty()) return;
  const auto problems = device_problems(hypervisor_.node_devices(), wanted);
  if (problems.empty()) return;
  std::string message;
  for (const auto& p : problems) message += (message.empty() ? "" : "; ") + p;
  throw EngineError(EngineError::Kind::Invalid, message);
}

void Engine::check_devices_free(const store::Space& space, const spec::Spec& spec) {
  const auto wanted = passthrough_devices(spec);
  if (wanted.empty()) return;
  for (const auto& other : store_.spaces().list()) {
    if (other.id == space.id || other.node != space.node) continue;
    if (!store::holds_node_resources(other.state)) continue;
    std::vector<spec::Device> held;
    try {
      held = passthrough_devices(space_spec(other));
    } catch (const std::exception&) {
      continue;
    }
    for (const auto& w : wanted)
      for (const auto& h : held)
        if (w.same(h))
          throw EngineError(EngineError::Kind::Conflict,
                            "device " + w.text + " is held by the running space " + other.name +
                                " (" + other.domain_name + "): stop it first");
  }
}

Accepted Engine::create_space(const CreateSpaceRequest& request, const std::string& node) {
  check_space_name(request.name);
  auto tmpl = store_.templates().find_by_name(request.template_name);
  if (!tmpl)
    throw EngineError(EngineError::Kind::NotFound, "no template named " + request.template_name);
  auto owner = store_.users().get(request.owner_id);
  if (!owner) throw EngineError(EngineError::Kind::NotFound, "no such user");
  if (store_.spaces().find_by_name(owner->id, request.name))
    throw EngineError(EngineError::Kind::Conflict,
                      owner->username + " already has a space named " + request.name);
  if (!node.empty() && node != settings_.node_name)
    return make_remote_space(*owner, *tmpl, request, node);
  return make_space(owner, std::nullopt, *tmpl, request.name, request.ip, request.start);
}

// One space for an owner, or an unowned member of a pool.
Accepted Engine::make_space(const std::optional<store::User>& owner,
                            std::optional<std::int64_t> pool_id, const store::Template& template_,
                            const std::string& name, const std::optional<std::string>& ip,
                            bool start) {
  const auto* tmpl = &template_;
  // Everything is checked before anything is made: the spec with this space's values, the
  // domain name, the network.
  store::Space probe;
  probe.id = random_uuid();
  probe.node = settings_.node_name;
  probe.name = name;
  if (owner) probe.owner_id = owner->id;
  probe.pool_id = pool_id;
  probe.template_id = tmpl->id;
  auto spec = space_spec(probe);
  // The images path also holds the image caches: a space must not take their directories.
  if (plan::is_reserved_directory(spec.name))
    throw EngineError(
        EngineError::Kind::Invalid,
        "the domain name \"" + spec.name + "\" is reserved for bowline's image directories");
  if (store_.spaces().find_by_domain_name(spec.name))
    throw EngineError(EngineError::Kind::Conflict,
                      "another space already uses the domain name " + spec.name);
  // A directory of that name is another tool's (a knot space sharing the images path) or a
  // leftover: its disk must never become this space's, nor be removed if this create fails.
  if (std::error_code ec; fs::exists(plan::space_dir(settings_.node.images_path, spec.name), ec))
    throw EngineError(EngineError::Kind::Conflict,
                      "the directory " + plan::space_dir(settings_.node.images_path, spec.name) +
                          " exists but belongs to no space of this server (a leftover, or "
                          "another tool's): move it away, or choose another name");
  if (auto existing = hypervisor_.lookup(spec.name))
    throw EngineError(EngineError::Kind::Conflict,
                      "libvirt already has a domain named " + spec.name +
                          (existing->metadata ? " (left by bowline; see the reconciler's report)"
                                              : " that bowline did not make"));
  const bool bridged = spec.network.mode == spec::NetworkMode::Bridged;
  if (bridged && !host_.bridge_exists(spec.network.bridge))
    throw EngineError(
        EngineError::Kind::Invalid,
        "bridge " + spec.network.bridge +
            " does not exist on this host (bowline node check says how to make one safely), or "
            "use network.mode nat");
  if (!bridged && !hypervisor_.network_exists(spec.network.bridge))
    throw EngineError(EngineError::Kind::Invalid,
                      "libvirt network " + spec.network.bridge + " does not exist on this host");
  if (!bridged && ip)
    throw EngineError(EngineError::Kind::Invalid,
                      "a NAT space gets its address by DHCP: --ip is for bridged templates");
  if (spec.external && spec.external_method == spec::ExternalMethod::WholeIP && !bridged)
    throw EngineError(EngineError::Kind::Invalid,
                      "externalMethod WholeIP gives the VM an address of its own, which on this "
                      "node only a bridged space has: use network.mode bridged, or PortList to "
                      "publish the externalPorts on ports of this host");
  check_devices_exist(spec);
  // runStrategy Halted: made, not started.
  const bool start_now = start && spec.run_strategy != spec::RunStrategy::Halted;
  if (start_now) check_devices_free(probe, spec);

  store::NewSpace fresh;
  fresh.id = probe.id;
  fresh.name = name;
  if (owner) fresh.owner_id = owner->id;
  fresh.pool_id = pool_id;
  fresh.template_id = tmpl->id;
  fresh.desired_state = start_now ? store::DesiredState::Running : store::DesiredState::Stopped;
  fresh.state = SpaceState::Pending;
  fresh.uuid = random_uuid();
  fresh.vnc_password = random_hex(8);
  fresh.domain_name = spec.name;
  fresh.node = settings_.node_name;

  store::Space space;
  {
    auto transaction = store_.transaction();
    space = store_.spaces().create(fresh);
    if (bridged) {
      const auto lease = ip ? Ipam(store_).lease_exact(spec.network, space.id, *ip)
                            : Ipam(store_).lease_next(spec.network, space.id);
      space.ip = store::format_ipv4(lease.ip);
      store_.spaces().set_ip(space.id, space.ip);
    }
    allocate_ports(space, spec);
    transaction.commit();
  }
  events_.publish(event::kSpaceCreated, space.id,
                  {{"name", space.name}, {"domain", space.domain_name}});
  const auto id = space.id;
  const auto op = enqueue(space, "create", [this, id, start_now](std::int64_t operation) {
    if (start_now) {
      bring_up(id, {operation}, true);
    } else {
      set_state(id, SpaceState::Stopped);
    }
  });
  return {space, op};
}

std::int64_t Engine::enqueue(const store::Space& space, const std::string& kind,
                             std::function<void(std::int64_t)> body) {
  // After a restart, the work continues under the operation a client may be waiting on.
  const auto adopted = take_adopted(space.id);
  const auto operation = adopted ? *adopted : store_.operations().create(space.id, kind).id;
  events_.publish(event::kOperationStarted, space.id,
                  adopted
                      ? nlohmann::json{{"operation", operation}, {"kind", kind}, {"resumed", true}}
                      : nlohmann::json{{"operation", operation}, {"kind", kind}});
  executor_.submit(space.id, [this, id = space.id, op = operation, kind, body = std::move(body)] {
    try {
      body(op);
      store_.operations().succeed(op);
      events_.publish(event::kOperationSucceeded, id, {{"operation", op}, {"kind", kind}});
    } catch (const std::exception& e) {
      store_.operations().fail(op, e.what());
      events_.publish(event::kOperationFailed, id,
                      {{"operation", op}, {"kind", kind}, {"error", e.what()}});
      if (store_.spaces().get(id)) set_state(id, SpaceState::Error, kind + " failed: " + e.what());
    }
  });
  return operation;
}

// image -> overlay -> seed -> define -> start. `first`: a failure undoes what this made.
void Engine::bring_up(const std::string& id, Stage stage, bool first) {
  const auto operation = stage.operation;
  auto space = require(id);
  set_state(id, first ? SpaceState::Creating : SpaceState::Starting);
  bool defined = false;
  Loaded l;
  plan::Plan plan;
  try {
    l = load(space);
    if (l.spec.network.mode == spec::NetworkMode::Bridged &&
        !host_.bridge_exists(l.spec.network.bridge))
      throw EngineError(EngineError::Kind::Invalid,
                        "bridge " + l.spec.network.bridge + " does not exist on this host");
    check_devices_exist(l.spec);
    check_devices_free(space, l.spec);
    progress(stage, id, "resolving image", 5);
    int last_percent = -1;
    const auto base = images_.resolve(l.spec.image, [&](std::uint64_t done, std::uint64_t total) {
      const int percent = total ? static_cast<int>(done * 100 / total) : 0;
      if (percent != last_percent && percent % 5 == 0) {
        last_percent = percent;
        events_.publish(event::kOperationProgress, id,
                        {{"operation", operation},
                         {"step", "downloading image"},
                         {"progress", stage.at(5 + percent * 60 / 100)},
                         {"bytes", done},
                         {"total", total}});
      }
    });

    const auto user = user_of(l.space, l.owner);
    const auto facts = facts_of(l.space, l.tmpl);
    plan = plan::make_plan(l.spec, user, facts, settings_.node);

    progress(stage, id, "preparing disk", 70);
    std::error_code ec;
    if (!fs::exists(plan.space_dir, ec)) {
      fs::create_directories(plan.space_dir);
      fs::permissions(plan.space_dir, fs::perms::owner_all | fs::perms::group_read |
                                          fs::perms::group_exec | fs::perms::others_read |
                                          fs::perms::others_exec);
    }
    if (!fs::exists(plan.system_disk.path, ec))
      disks_.create_overlay(base, plan.system_disk.path, l.spec.disk_bytes);
    else if (l.spec.disk_bytes)
      disks_.grow(plan.system_disk.path, *l.spec.disk_bytes);

    progress(stage, id, "writing cloud-init seed", 80);
    write_seed(plan);

    // The template's external ports as they are now (a change applies at the next start).
    allocate_ports(space, l.spec);
    progress(stage, id, "defining domain", 90);
    {
      // Dedicated CPUs and GPUs: chosen and written into the domain under one lock.
      std::lock_guard placing(placement_mutex_);
      plan::place(plan, l.spec, place(l.space, l.spec, plan));
      hypervisor_.define(libvirt::render_domain_xml(plan, libvirt::metadata_for(facts, user)));
    }
    defined = true;
    hypervisor_.set_autostart(plan.domain_name, l.spec.run_strategy == spec::RunStrategy::Always);
    store_.spaces().set_applied(id, l.tmpl.revision, applied_parts(l.space, l.spec, plan));

    progress(stage, id, "starting", 95);
    const auto status = hypervisor_.state(plan.domain_name);
    if (status.state != libvirt::DomainState::Running) {
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
    store_.spaces().set_desired_state(id, store::DesiredState::Running);
    set_state(id, SpaceState::Running);
    progress(stage, id, "running", 100);
    publish_ports(id);
  } catch (...) {
    if (first) {
      // A failed create leaves nothing behind: no domain, no files, no address.
      if (defined || hypervisor_.lookup(space.domain_name)) {
        try {
          hypervisor_.destroy(space.domain_name);
          hypervisor_.undefine(space.domain_name);
        } catch (...) {
        }
      }
      std::error_code ec;
      // Also when an earlier, interrupted attempt made the directory: it holds only this
      // never-started space's disk and seed.
      fs::remove_all(plan::space_dir(settings_.node.images_path, space.domain_name), ec);
      store_.leases().release_ips(id);
      store_.spaces().set_ip(id, std::nullopt);
    }
    throw;
  }
}

std::int64_t Engine::start_space(const std::string& id) {
  auto space = require(id);
  if (space.state == SpaceState::Deleting)
    throw EngineError(EngineError::Kind::Conflict, "the space is being deleted");
  if (is_remote(space)) return remote_start(space);
  store_.spaces().set_desired_state(id, store::DesiredState::Running);
  const bool first = space.applied_template_revision == 0;
  return enqueue(space, "start", [this, id, first](std::int64_t op) {
    auto current = require(id);
    // A bridged space whose create failed lost its address: take one again.
    if (!current.ip) {
      const auto spec = space_spec(current);
      if (spec.network.mode == spec::NetworkMode::Bridged)
        store_.spaces().set_ip(id,
                               store::format_ipv4(Ipam(store_).lease_next(spec.network, id).ip));
    }
    bring_up(id, {op}, first);
  });
}

// libvirt autostarts a domain when libvirtd starts (a host reboot): only while its space is to
// run. A user's stop turns it off; the next start turns it on again for runStrategy Always.
void Engine::keep_off_at_boot(const store::Space& space) {
  try {
    if (const auto info = hypervisor_.lookup(space.domain_name); info && info->autostart)
      hypervisor_.set_autostart(space.domain_name, false);
  } catch (const libvirt::HypervisorError& e) {
    if (!e.is_no_domain()) throw;
  }
}

bool Engine::wait_for_shutoff(const std::string& domain, std::chrono::seconds timeout) {
  const auto deadline = timer_.now() + timeout;
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

void Engine::shut_down(const store::Space& space, Stage stage) {
  const auto info = hypervisor_.lookup(space.domain_name);
  if (!info || info->status.state == libvirt::DomainState::Shutoff) return;
  progress(stage, space.id, "shutting down", 10);
  try {
    hypervisor_.shutdown(space.domain_name);
  } catch (const libvirt::HypervisorError&) {
    // Not running any more, or no ACPI: destroy below decides.
  }
  if (!wait_for_shutoff(space.domain_name, settings_.stop_timeout)) {
    progress(stage, space.id, "forcing off after the stop timeout", 80);
    hypervisor_.destroy(space.domain_name);
  }
}

std::int64_t Engine::stop_space(const std::string& id) {
  auto space = require(id);
  if (is_remote(space)) return remote_stop(space);
  store_.spaces().set_desired_state(id, store::DesiredState::Stopped);
  return enqueue(space, "stop", [this, id](std::int64_t op) {
    auto current = require(id);
    set_state(id, SpaceState::Stopping);
    // First: a host that reboots while the guest shuts down must not bring it back.
    keep_off_at_boot(current);
    shut_down(current, {op});
    withdraw_ports(id);
    set_state(id, SpaceState::Stopped);
  });
}

std::int64_t Engine::restart_space(const std::string& id) {
  auto space = require(id);
  if (is_remote(space)) return remote_restart(space);
  store_.spaces().set_desired_state(id, store::DesiredState::Running);
  return enqueue(space, "restart", [this, id](std::int64_t op) {
    auto current = require(id);
    set_state(id, SpaceState::Stopping);
    shut_down(current, {op, 0, 30});
    withdraw_ports(id);
    bring_up(id, {op, 30, 100}, current.applied_template_revision == 0);
  });
}

void Engine::tear_down(const store::Space& space) {
  withdraw_ports(space.id);
  try {
    hypervisor_.destroy(space.domain_name);
  } catch (const libvirt::HypervisorError& e) {
    if (!e.is_no_domain() && !e.is_operation_invalid()) throw;
  }
  hypervisor_.undefine(space.domain_name);
  std::error_code ec;
  const auto dir = plan::space_dir(settings_.node.images_path, space.domain_name);
  fs::remove_all(dir, ec);
  if (ec) throw std::runtime_error("cannot remove " + dir + ": " + ec.message());
  store_.leases().release_ips(space.id);
}

std::int64_t Engine::delete_space(const std::string& id) {
  auto space = require(id);
  if (is_remote(space)) return remote_delete(space);
  store_.spaces().set_desired_state(id, store::DesiredState::Stopped);
  return enqueue(space, "delete", [this, id](std::int64_t) {
    auto current = require(id);
    set_state(id, SpaceState::Deleting);
    tear_down(current);
    store_.spaces().remove(id);
    events_.publish(event::kSpaceDeleted, id, {{"name", current.name}});
    // A pool whose member was deleted makes a new one (unless the pool is going too).
    if (current.pool_id && store_.pools().get(*current.pool_id)) replenish(*current.pool_id);
  });
}

void Engine::set_ip(const std::string& id, const std::string& ip) {
  auto space = require(id);
  if (is_remote(space))
    throw EngineError(EngineError::Kind::Invalid,
                      "a space on the node " + space.node + " gets its address from the cluster");
  if (space.state != SpaceState::Stopped)
    throw EngineError(EngineError::Kind::Conflict,
                      "stop the space first: its address changes only while it is stopped");
  const auto spec = space_spec(space);
  if (spec.network.mode != spec::NetworkMode::Bridged)
    throw EngineError(EngineError::Kind::Invalid, "a NAT space gets its address by DHCP");
  {
    auto transaction = store_.transaction();
    Ipam(store_).lease_exact(spec.network, id, ip);
    store_.spaces().set_ip(id, ip);
    transaction.commit();
  }
  events_.publish(event::kSpaceIp, id, {{"ip", ip}});
}

SpaceView Engine::describe(const std::string& id) {
  SpaceView view;
  view.space = require(id);
  if (view.space.owner_id)
    if (auto owner = store_.users().get(*view.space.owner_id)) view.owner = owner->username;
  if (auto tmpl = store_.templates().get(view.space.template_id)) {
    view.template_name = tmpl->name;
    view.template_revision = tmpl->revision;
    view.redefine_pending = view.space.applied_template_revision != 0 &&
                            view.space.applied_template_revision != tmpl->revision;
  }
  view.address = view.space.ip;
  view.pending = pending_of(view.space);
  {
    std::lock_guard lock(forwards_mutex_);
    const auto active = forwards_.find(id);
    for (const auto& port : store_.host_ports().of_space(id)) {
      bool on = false;
      if (active != forwards_.end())
        for (const auto& f : active->second) on = on || f.host_port == port.host_port;
      view.external_ports.push_back({port.protocol, port.host_port, port.guest_port, on});
    }
    if (const auto it = forward_errors_.find(id); it != forward_errors_.end())
      view.external_error = it->second;
  }
  if (is_remote(view.space)) {
    view.readiness_known = false;  // no console log on this host
    return view;
  }
  if (!view.address && view.space.state == SpaceState::Running) {
    for (auto source : {libvirt::AddressSource::Lease, libvirt::AddressSource::Agent}) {
      try {
        for (const auto& a : hypervisor_.interface_addresses(view.space.domain_name, source))
          if (!a.ipv6 && !view.address) view.address = a.address;
      } catch (const libvirt::HypervisorError&) {
      }
      if (view.address) break;
    }
  }
  view.readiness = read_readiness(
      plan::console_log_of(plan::space_dir(settings_.node.images_path, view.space.domain_name)));
  return view;
}

// What this start applies: every part as it is now, except those that reach new spaces only,
// which keep what the space was made with (so space info keeps saying the space lacks them).
std::string Engine::applied_parts(const store::Space& space, const spec::Spec& spec,
                                  const plan::Plan& plan) {
  auto parts = plan::change_parts(spec, plan);
  const auto before = nlohmann::json::parse(space.applied_parts, nullptr, false);
  if (before.is_object())
    for (const auto& rule : plan::part_rules())
      if (rule.applies == plan::Applies::NewSpaces && before.contains(rule.name) &&
          before[rule.name].is_string())
        parts[rule.name] = before[rule.name].get<std::string>();
  return nlohmann::json(parts).dump();
}

std::vector<plan::PendingChange> Engine::pending_of(const store::Space& space) {
  const auto applied = nlohmann::json::parse(space.applied_parts, nullptr, false);
  if (!applied.is_object() || applied.empty()) return {};
  try {
    const auto loaded = load(space);
    return plan::pending_changes(applied.get<std::map<std::string, std::string>>(),
                                 plan::change_parts(loaded.spec, plan_for(loaded)));
  } catch (const std::exception&) {
    return {};  // a template that no longer expands says so when the space starts
  }
}

bool Engine::still_true(const std::string& domain, libvirt::DomainState state) {
  try {
    const auto live = hypervisor_.state(domain).state;
    if (state == libvirt::DomainState::Shutoff) return live == libvirt::DomainState::Shutoff;
    return live != libvirt::DomainState::Shutoff;
  } catch (const libvirt::HypervisorError& e) {
    // The domain is gone: only a stop can still be true.
    return e.is_no_domain() && state == libvirt::DomainState::Shutoff;
  }
}

void Engine::on_lifecycle(const libvirt::LifecycleEvent& event) {
  { std::lock_guard lock(shutoff_mutex_); }
  shutoff_.notify_all();
  const auto after = libvirt::state_after(event);
  if (!after) return;
  std::optional<store::Space> space;
  try {
    space = store_.spaces().find_by_domain_name(event.domain);
  } catch (...) {
    return;
  }
  if (!space) return;
  events_.publish(event::kDomainLifecycle, space->id, {{"event", libvirt::describe(event)}});
  // Background: never block libvirt's event thread.
  executor_.submit(space->id, [this, id = space->id, state = *after,
                               crash = libvirt::is_crash(event)] {
    auto current = store_.spaces().get(id);
    if (!current || store::operation_owns(current->state))
      return;  // an operation owns the state right now
    // Events queue behind the operation that caused them: by the time this runs, a restart's
    // own shutdown is history. Act only when libvirt still says what the event said.
    if (!still_true(current->domain_name, state)) return;
    if (state == libvirt::DomainState::Running && current->state != SpaceState::Running) {
      set_state(id, SpaceState::Running);
      publish_ports(id);
    } else if (state == libvirt::DomainState::Shutoff && current->state == SpaceState::Running) {
      set_state(id, SpaceState::Stopped);
      withdraw_ports(id);
      // Stopped without a user's stop: Always restarts, RerunOnFailure only after a crash.
      if (current->desired_state == store::DesiredState::Running) {
        try {
          const auto spec = space_spec(*current);
          const bool again = spec.run_strategy == spec::RunStrategy::Always ||
                             (spec.run_strategy == spec::RunStrategy::RerunOnFailure && crash);
          if (again) {
            events_.publish(event::kSpaceRestart, id,
                            {{"reason", crash ? "crashed" : "stopped inside the guest"}});
            start_space(id);
          } else {
            store_.spaces().set_desired_state(id, store::DesiredState::Stopped);
            keep_off_at_boot(*current);
          }
        } catch (const std::exception& e) {
          set_state(id, SpaceState::Error, std::string("cannot restart: ") + e.what());
        }
      }
    }
  });
}

}  // namespace bowline::engine
