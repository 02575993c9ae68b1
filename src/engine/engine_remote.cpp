// Spaces on remote nodes (a KubeVirt cluster): the same operations, states and events as on
// the local libvirt node, with the side effects handed to the space's RemoteNode.
#include <thread>

#include "engine/engine.hpp"
#include "engine/event_kinds.hpp"
#include "engine/identifiers.hpp"

namespace bowline::engine {

using store::SpaceState;

namespace {

SpaceState space_state_of(RemoteState state) {
  switch (state) {
    case RemoteState::Running:
      return SpaceState::Running;
    case RemoteState::Stopped:
      return SpaceState::Stopped;
    case RemoteState::Starting:
      return SpaceState::Starting;
    case RemoteState::Stopping:
      return SpaceState::Stopping;
    case RemoteState::Failed:
    case RemoteState::Gone:
      break;
  }
  return SpaceState::Error;
}

}  // namespace

void Engine::add_node(RemoteNode& node) {
  if (node.name() == settings_.node_name)
    throw std::invalid_argument("the node name " + node.name() + " is the local node's");
  remote_nodes_[node.name()] = &node;
}

RemoteNode& Engine::remote_node(const store::Space& space) {
  const auto it = remote_nodes_.find(space.node);
  if (it == remote_nodes_.end())
    throw EngineError(EngineError::Kind::Invalid,
                      "the space's node " + space.node + " is not configured on this server");
  return *it->second;
}

Accepted Engine::make_remote_space(const store::User& owner, const store::Template& tmpl,
                                   const CreateSpaceRequest& request,
                                   const std::string& node_name) {
  const auto it = remote_nodes_.find(node_name);
  if (it == remote_nodes_.end()) {
    std::string known = settings_.node_name;
    for (const auto& [name, node] : remote_nodes_) known += ", " + name;
    throw EngineError(EngineError::Kind::Invalid,
                      "no node named " + node_name + " (nodes: " + known + ")");
  }
  auto& node = *it->second;
  if (request.ip)
    throw EngineError(EngineError::Kind::Invalid,
                      "a space on the " + std::string(node.kind()) + " node " + node.name() +
                          " gets its address from the cluster: --ip is for bridged spaces on "
                          "libvirt nodes");
  store::Space probe;
  probe.id = random_uuid();
  probe.node = node.name();
  probe.name = request.name;
  probe.owner_id = owner.id;
  probe.template_id = tmpl.id;
  const auto spec = space_spec(probe);
  const auto refusals = node.refusals(spec);
  if (!refusals.empty()) {
    std::string message = "template " + tmpl.name + " cannot run on the node " + node.name() + ":";
    for (const auto& r : refusals) message += " " + r;
    throw EngineError(EngineError::Kind::Invalid, message);
  }
  if (store_.spaces().find_by_domain_name(spec.name))
    throw EngineError(EngineError::Kind::Conflict,
                      "another space already uses the domain name " + spec.name);
  const bool start_now = request.start && spec.run_strategy != spec::RunStrategy::Halted;

  store::NewSpace fresh;
  fresh.id = probe.id;
  fresh.name = request.name;
  fresh.owner_id = owner.id;
  fresh.template_id = tmpl.id;
  fresh.desired_state = start_now ? store::DesiredState::Running : store::DesiredState::Stopped;
  fresh.state = SpaceState::Pending;
  fresh.uuid = random_uuid();
  fresh.vnc_password = random_hex(8);
  fresh.domain_name = spec.name;
  fresh.node = node.name();
  const auto space = store_.spaces().create(fresh);
  events_.publish(event::kSpaceCreated, space.id,
                  {{"name", space.name}, {"domain", space.domain_name}, {"node", space.node}});
  const auto id = space.id;
  const auto op = enqueue(space, "create", [this, id, start_now](std::int64_t operation) {
    remote_apply(id, operation, start_now, true);
  });
  return {space, op};
}

// Render and apply every object; `first`: a failure deletes what this create made.
void Engine::remote_apply(const std::string& id, std::int64_t operation, bool running, bool first) {
  auto space = require(id);
  auto& node = remote_node(space);
  set_state(id, first ? SpaceState::Creating : SpaceState::Starting);
  try {
    const auto l = load(space);
    progress(operation, id, "applying objects", 20);
    node.apply({l.space, l.spec, l.space.owner_id ? &l.owner : nullptr}, running);
    store_.spaces().set_applied_template_revision(id, l.tmpl.revision);
  } catch (...) {
    if (first) {
      try {
        node.remove(space);
      } catch (...) {
      }
    }
    throw;
  }
  progress(operation, id, running ? "starting" : "stopped", 60);
  remote_settle(require(id), running ? RemoteState::Running : RemoteState::Stopped);
  progress(operation, id, running ? "running" : "stopped", 100);
}

void Engine::remote_settle(const store::Space& space, RemoteState wanted) {
  auto& node = remote_node(space);
  const auto deadline = timer_.now() + settings_.stop_timeout;
  Observation seen = node.observe(space);
  while (seen.state != wanted && seen.state != RemoteState::Failed &&
         seen.state != RemoteState::Gone && timer_.now() < deadline) {
    timer_.sleep_for(std::chrono::seconds(1));
    seen = node.observe(space);
  }
  if (seen.state == RemoteState::Failed)
    throw std::runtime_error("the VirtualMachine reports " + seen.detail);
  if (seen.state == RemoteState::Gone) throw std::runtime_error(seen.detail);
  // Still on its way after the timeout: the state says so and the audit follows it up.
  set_state(space.id, space_state_of(seen.state));
}

std::int64_t Engine::remote_start(const store::Space& space) {
  remote_node(space);
  store_.spaces().set_desired_state(space.id, store::DesiredState::Running);
  const bool first = space.applied_template_revision == 0;
  // A template changed since the last apply takes effect here: start re-applies everything.
  return enqueue(space, "start", [this, id = space.id, first](std::int64_t op) {
    remote_apply(id, op, true, first);
  });
}

std::int64_t Engine::remote_stop(const store::Space& space) {
  remote_node(space);
  store_.spaces().set_desired_state(space.id, store::DesiredState::Stopped);
  return enqueue(space, "stop", [this, id = space.id](std::int64_t op) {
    auto current = require(id);
    set_state(id, SpaceState::Stopping);
    progress(op, id, "stopping", 10);
    remote_node(current).power_off(current);
    remote_settle(current, RemoteState::Stopped);
    progress(op, id, "stopped", 100);
  });
}

std::int64_t Engine::remote_restart(const store::Space& space) {
  remote_node(space);
  store_.spaces().set_desired_state(space.id, store::DesiredState::Running);
  return enqueue(space, "restart", [this, id = space.id](std::int64_t op) {
    auto current = require(id);
    set_state(id, SpaceState::Stopping);
    const auto l = load(current);
    progress(op, id, "restarting", 20);
    remote_node(current).restart({l.space, l.spec, l.space.owner_id ? &l.owner : nullptr});
    store_.spaces().set_applied_template_revision(id, l.tmpl.revision);
    remote_settle(current, RemoteState::Running);
    progress(op, id, "running", 100);
  });
}

std::int64_t Engine::remote_delete(const store::Space& space) {
  remote_node(space);
  store_.spaces().set_desired_state(space.id, store::DesiredState::Stopped);
  return enqueue(space, "delete", [this, id = space.id](std::int64_t) {
    auto current = require(id);
    set_state(id, SpaceState::Deleting);
    // The row goes only once the cluster took every delete (404: already gone).
    remote_node(current).remove(current);
    store_.spaces().remove(id);
    events_.publish(event::kSpaceDeleted, id, {{"name", current.name}});
  });
}

void Engine::remote_settle_interrupted(const store::Space& space) {
  const auto seen = remote_node(space).observe(space);
  if (seen.state == RemoteState::Failed)
    set_state(space.id, SpaceState::Error, "the VirtualMachine reports " + seen.detail);
  else  // Gone: nothing was applied yet
    set_state(space.id,
              seen.state == RemoteState::Gone ? SpaceState::Stopped : space_state_of(seen.state));
}

void Engine::remote_check_drift(const store::Space& space) {
  if (store::operation_owns(space.state) || space.applied_template_revision == 0)
    return;  // an operation owns it, or nothing was ever applied
  const auto it = remote_nodes_.find(space.node);
  if (it == remote_nodes_.end()) {
    if (space.state != SpaceState::Error)
      set_state(space.id, SpaceState::Error,
                "the space's node " + space.node + " is not configured on this server");
    return;
  }
  Observation seen;
  try {
    seen = it->second->observe(space);
  } catch (const std::exception& e) {
    // Like libvirt being unreachable: reported, the space's state left as it was.
    events_.publish(event::kReconcileError, space.id, {{"error", e.what()}});
    return;
  }
  std::string problem;
  if (seen.state == RemoteState::Gone)
    problem = "the VirtualMachine " + space.domain_name + " vanished from the cluster";
  if (seen.state == RemoteState::Failed) problem = "the VirtualMachine reports " + seen.detail;
  if (!problem.empty()) {
    if (space.state != SpaceState::Error || space.error != problem)
      set_state(space.id, SpaceState::Error, problem);
    return;
  }
  const auto state = space_state_of(seen.state);
  // An error stays until the machine runs again (as on libvirt).
  if (space.state == SpaceState::Error && state != SpaceState::Running) return;
  if (state != space.state) set_state(space.id, state);
}

}  // namespace bowline::engine
