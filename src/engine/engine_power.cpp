// A space's power on its node: start, stop, restart and delete as operations on the space's
// queue, and the bring up they share.
#include "engine/engine.hpp"
#include "engine/event_kinds.hpp"
#include "engine/host_keys.hpp"
#include "engine/ipam.hpp"

namespace bowline::engine {

using store::SpaceState;

Progress Engine::progress_for(const Stage& stage, const std::string& id) {
  Progress p;
  p.step = [this, stage, id](const std::string& step, int percent) {
    progress(stage, id, step, percent);
  };
  p.download = [this, stage, id](const std::string& step, int percent, std::uint64_t done,
                                 std::uint64_t total) {
    // Called from the thread that downloads, which may be another operation's: a report
    // that cannot be recorded (this operation ended meanwhile) must not fail that download.
    try {
      progress(stage.operation, id, step, stage.at(percent), std::pair(done, total));
    } catch (const std::exception&) {
    }
  };
  p.applied = [] {};
  p.booting = [] {};
  return p;
}

void Engine::settle(const std::string& id, const Observation& seen) {
  if (seen.state == MachineState::Failed || seen.state == MachineState::Gone)
    throw std::runtime_error(seen.detail);
  set_state(id, space_state_of(seen.state));
}

// A space an older server made gets its browser terminal key at its next start, which is when
// the guest's authorized_keys takes it.
store::Space Engine::with_terminal_key(store::Space space) {
  if (!space.terminal_key.empty()) return space;
  const auto key = make_host_key("bowline-terminal@" + space.domain_name);
  store_.spaces().set_terminal_key(space.id, key.private_key, key.public_line);
  space.terminal_key = key.private_key;
  space.terminal_key_public = key.public_line;
  return space;
}

// The node makes (and runs) the machine as the template says now; `how.first`: a failure
// undoes what this made.
void Engine::bring_up(const std::string& id, Stage stage, Bring how) {
  auto space = with_terminal_key(require(id));
  auto& node = node_of(space);
  const auto booting = how.first ? SpaceState::Creating : SpaceState::Starting;
  // A create that only makes the machine says nothing until the node says what it made.
  if (how.run) set_state(id, how.restart ? SpaceState::Stopping : booting);
  try {
    auto l = load(space);
    refuse_unrunnable(node, l.spec, l.tmpl.name);
    check_devices_free(space, l.spec);
    check_disks_free(space, l.spec);
    // The template's external ports as they are now (a change applies at the next start).
    allocate_ports(space, l.spec);
    renew_instance(l, node);
    const auto on_node = node_space(l);
    const bool image_was_here = !disk_files_ || disk_files_->images().local_file(l.spec.image);
    auto p = progress_for(stage, id);
    p.applied = [&] {
      if (const auto parts = node.parts(on_node))
        store_.spaces().set_applied(id, l.tmpl.revision, applied_parts(l.space, *parts));
      else
        store_.spaces().set_applied_template_revision(id, l.tmpl.revision);
    };
    p.booting = [&] {
      withdraw_ports(id);
      set_state(id, booting);
    };
    Applied applied;
    if (how.restart)
      applied.seen = node.restart(on_node, p);
    else
      applied = node.apply(on_node, p, how.run);
    if (how.run) store_.spaces().set_desired_state(id, store::DesiredState::Running);
    if (applied.made) {
      record_disk_size(require(id));
      charge_download(l.space.owner_id, l.spec.image, image_was_here);
    }
    settle(id, applied.seen);
    if (applied.made)
      progress(stage, id, applied.seen.state == MachineState::Running ? "running" : "stopped", 100);
    if (how.run) publish_ports(id);
  } catch (...) {
    if (how.first) undo_create(space, node);
    throw;
  }
}

void Engine::undo_create(const store::Space& space, Node& node) {
  // A failed create leaves nothing behind: no machine, no files, no address. Also when an
  // earlier, interrupted attempt made them: they are only this never-started space's.
  try {
    node.tear_down(space);
  } catch (...) {
  }
  store_.leases().release_ips(space.id);
  store_.spaces().set_ip(space.id, std::nullopt);
}

std::int64_t Engine::start_space(const std::string& id) {
  auto space = require(id);
  if (space.state == SpaceState::Deleting)
    throw EngineError(EngineError::Kind::Conflict, "the space is being deleted");
  // A suspended space continues where it was (a template change waits for a stop and start).
  if (space.state == SpaceState::Suspended || space.state == SpaceState::Suspending)
    return resume_space(id, "start");
  node_of(space);  // its node must be configured here
  store_.spaces().set_desired_state(id, store::DesiredState::Running);
  const bool first = space.applied_template_revision == 0;
  return enqueue(space, "start", [this, id, first](std::int64_t op) {
    // Its node as it is now: a move queued before this one may have changed it.
    auto& node = node_of(require(id));
    auto current = require(id);
    // A bridged space whose create failed lost its address: take one again.
    if (!current.ip) {
      const auto spec = space_spec(current);
      if (!node.fixed_address_refusal(spec))
        store_.spaces().set_ip(
            id, store::format_ipv4(
                    Ipam(store_, settings_.host_addresses).lease_next(spec.network, id).ip));
    }
    bring_up(id, {op}, {true, first, false});
  });
}

std::int64_t Engine::stop_space(const std::string& id) {
  auto space = require(id);
  node_of(space);  // its node must be configured here
  store_.spaces().set_desired_state(id, store::DesiredState::Stopped);
  return enqueue(space, "stop", [this, id](std::int64_t op) {
    // Its node as it is now: a move queued before this one may have changed it.
    auto& node = node_of(require(id));
    auto current = require(id);
    set_state(id, SpaceState::Stopping);
    // First: a host that reboots while the guest shuts down must not bring it back.
    node.stay_off(current);
    const auto seen = node.shut_down(current, progress_for({op}, id));
    withdraw_ports(id);
    settle(id, seen);
    progress(op, id, "stopped", 100);
  });
}

std::int64_t Engine::restart_space(const std::string& id) {
  auto space = require(id);
  node_of(space);
  store_.spaces().set_desired_state(id, store::DesiredState::Running);
  return enqueue(space, "restart", [this, id](std::int64_t op) {
    bring_up(id, {op}, {true, require(id).applied_template_revision == 0, true});
  });
}

std::int64_t Engine::delete_space(const std::string& id) {
  auto space = require(id);
  node_of(space);  // its node must be configured here
  refuse_while_cloned(space, "its delete");
  store_.spaces().set_desired_state(id, store::DesiredState::Stopped);
  return enqueue(space, "delete", [this, id](std::int64_t) {
    // Its node as it is now: a move queued before this one may have changed it.
    auto& node = node_of(require(id));
    auto current = require(id);
    set_state(id, SpaceState::Deleting);
    withdraw_ports(id);
    // The row goes only once the node removed everything (a cluster took every delete).
    node.tear_down(current);
    store_.leases().release_ips(id);
    store_.spaces().remove(id);
    events_.publish(event::kSpaceDeleted, id, {{"name", current.name}});
    // A pool whose member was deleted makes a new one (unless the pool is going too).
    if (current.pool_id && store_.pools().get(*current.pool_id)) replenish(*current.pool_id);
  });
}

void Engine::set_ip(const std::string& id, const std::string& ip) {
  auto space = require(id);
  const auto spec = space_spec(space);
  if (const auto why = node_of(space).fixed_address_refusal(spec))
    throw EngineError(EngineError::Kind::Invalid, *why);
  if (space.state != SpaceState::Stopped)
    throw EngineError(EngineError::Kind::Conflict,
                      "stop the space first: its address changes only while it is stopped");
  {
    auto transaction = store_.transaction();
    Ipam(store_, settings_.host_addresses).lease_exact(spec.network, id, ip);
    store_.spaces().set_ip(id, ip);
    transaction.commit();
  }
  events_.publish(event::kSpaceIp, id, {{"ip", ip}});
}

}  // namespace bowline::engine
