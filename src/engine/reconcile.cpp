// The store against the nodes at start-up and on a timer: what a node reports wins;
// operations a stopped server left are finished under their own ids; orphans are reported,
// never deleted on a guess.
#include "engine/engine.hpp"
#include "engine/event_kinds.hpp"

namespace bowline::engine {

using store::SpaceState;

void Engine::reconcile() {
  auto unfinished = unfinished_operations();
  // A clone cut short may have left its short-lived snapshot on a source, which is not named
  // anywhere: only then is every settled space asked for its snapshots.
  bool clone_cut_short = false;
  for (const auto& [id, operations] : unfinished)
    for (const auto& op : operations) clone_cut_short = clone_cut_short || op.kind == "clone";
  for (const auto& space : store_.spaces().list()) {
    if (clone_cut_short &&
        (space.state == SpaceState::Running || space.state == SpaceState::Stopped))
      drop_clone_points(space);
    reconcile_space(space, unfinished[space.id]);
    unfinished.erase(space.id);
  }
  // Operations of spaces that are gone, or of none.
  for (auto& [space_id, operations] : unfinished)
    end_interrupted(operations, "the server stopped before it finished");
  report_orphans();
  for (const auto& pool : store_.pools().list()) replenish(pool.id);
}

// Finishes what a stopped server left half-done, under the operations it left.
void Engine::reconcile_space(const store::Space& space, std::vector<store::Operation>& operations) {
  const bool to_run = space.desired_state == store::DesiredState::Running;
  if ((space.state == SpaceState::Pending || space.state == SpaceState::Creating) &&
      !operations.empty() && operations.back().kind == "clone") {
    // Its disk was being copied: what is there is no clone, and a bring up would boot the base
    // image under its name. Nothing of it is kept; the row says why.
    end_interrupted(operations, "the server stopped while it copied the clone's disk");
    executor_.submit(space.id, [this, id = space.id] {
      if (const auto current = store_.spaces().get(id)) {
        undo_create(*current, node_of(*current));
        set_state(id, SpaceState::Error,
                  "clone interrupted: the server stopped while it copied the disk; delete this "
                  "space and clone again");
      }
    });
    return;
  }
  reconcile_snapshots(space, operations);
  if (reconcile_restore(space, operations)) return;
  switch (space.state) {
    case SpaceState::Pending:
    case SpaceState::Creating:
    case SpaceState::Starting:
      // The server stopped during an operation: finish it (a bring up is idempotent).
      if (to_run) {
        adopt(space.id, operations);
        start_space(space.id);
      } else {
        settle_from_node(space, operations);
      }
      return;
    case SpaceState::Stopping:
      // A stop (or a restart's stop) was cut short: do it again.
      adopt(space.id, operations);
      if (to_run)
        start_space(space.id);
      else
        stop_space(space.id);
      return;
    case SpaceState::Deleting:
      adopt(space.id, operations);
      delete_space(space.id);
      return;
    case SpaceState::Suspending:
      // A suspend cut short: the machine is saved or still running; either is a settled state.
      settle_from_node(space, operations);
      return;
    default:
      break;
  }
  // Settled, but an operation was queued or cut short: do what it was for, or end it.
  if (!operations.empty()) {
    if (to_run && space.state == SpaceState::Stopped) {
      adopt(space.id, operations);
      start_space(space.id);
    } else if (!to_run && space.state == SpaceState::Running) {
      adopt(space.id, operations);
      stop_space(space.id);
    } else {
      end_interrupted(operations, std::string("the server stopped before it finished; the "
                                              "space is ") +
                                      store::to_string(space.state));
    }
  }
  queue_drift_check(space.id);
}

// The space's state is whatever its node says now; the newest operation ends with that.
void Engine::settle_from_node(const store::Space& space,
                              std::vector<store::Operation>& operations) {
  std::optional<std::int64_t> last;
  if (!operations.empty()) {
    last = operations.back().id;
    operations.pop_back();
    end_interrupted(operations, "superseded by operation " + std::to_string(*last));
  }
  executor_.submit(space.id, [this, id = space.id, last] {
    if (auto current = store_.spaces().get(id)) settle_interrupted(*current, last);
  });
}

Engine::Unfinished Engine::unfinished_operations() {
  Unfinished out;
  for (auto& op : store_.operations().list_unfinished())
    out[op.space_id.value_or("")].push_back(std::move(op));
  return out;
}

void Engine::adopt(const std::string& space_id, std::vector<store::Operation>& operations) {
  if (operations.empty()) return;
  const auto last = operations.back().id;
  operations.pop_back();
  end_interrupted(operations, "superseded by operation " + std::to_string(last));
  std::lock_guard lock(adopted_mutex_);
  adopted_[space_id] = last;
}

std::optional<std::int64_t> Engine::take_adopted(const std::string& space_id) {
  std::lock_guard lock(adopted_mutex_);
  const auto it = adopted_.find(space_id);
  if (it == adopted_.end()) return std::nullopt;
  const auto id = it->second;
  adopted_.erase(it);
  return id;
}

void Engine::end_interrupted(std::vector<store::Operation>& operations, const std::string& why) {
  for (const auto& op : operations) {
    const auto error = "interrupted: " + why;
    store_.operations().fail(op.id, error);
    events_.publish(event::kOperationFailed,
                    op.space_id ? std::optional<std::string>(*op.space_id) : std::nullopt,
                    {{"operation", op.id}, {"kind", op.kind}, {"error", error}});
  }
  operations.clear();
}

void Engine::audit() {
  // External ports that the host refused (ip_forward off, nft missing): tried again, so a
  // fixed host needs no restart of the space.
  std::vector<std::string> retry;
  {
    std::lock_guard lock(forwards_mutex_);
    for (const auto& [id, error] : forward_errors_) retry.push_back(id);
  }
  for (const auto& id : retry) publish_ports(id);
  check_reach();
  for (const auto& space : store_.spaces().list()) queue_drift_check(space.id);
  report_orphans();
  prune_history();
}

void Engine::prune_history() {
  const auto now = store_.clock().now_unix_ms();
  const auto ms = [](std::chrono::hours h) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(h).count();
  };
  store_.events().prune_before(now - ms(settings_.event_retention));
  store_.operations().prune_finished_before(now - ms(settings_.operation_retention));
}

void Engine::settle_interrupted(const store::Space& space, std::optional<std::int64_t> operation) {
  // A create or start that was not to leave the space running was cut short: whatever the
  // machine is now (nothing made yet counts as stopped) is the space's state, and the
  // operation has done what it was for.
  try {
    const auto seen = node_of(space).observe(space);
    if (seen.state == MachineState::Failed)
      set_state(space.id, SpaceState::Error, seen.detail);
    else  // Gone: nothing was made yet
      set_state(space.id, seen.state == MachineState::Gone ? SpaceState::Stopped
                                                           : space_state_of(seen.state));
    if (operation) {
      store_.operations().succeed(*operation);
      events_.publish(event::kOperationSucceeded, space.id, {{"operation", *operation}});
    }
  } catch (const std::exception& e) {
    events_.publish(event::kReconcileError, space.id, {{"error", e.what()}});
    if (operation) {
      store_.operations().fail(*operation, std::string("interrupted: ") + e.what());
      events_.publish(event::kOperationFailed, space.id,
                      {{"operation", *operation}, {"error", e.what()}});
    }
  }
}

void Engine::queue_drift_check(const std::string& id) {
  // On the space's queue, behind its lifecycle events: a check run on the caller's thread
  // raced a queued stop event, and whichever wrote last won.
  executor_.submit(id, [this, id] {
    if (auto current = store_.spaces().get(id)) check_drift(*current);
  });
}

void Engine::check_drift(const store::Space& space) {
  if (store::operation_owns(space.state) || space.applied_template_revision == 0)
    return;  // an operation owns it, or nothing was ever made
  auto* node = find_node(space.node);
  if (!node) {
    if (space.state != SpaceState::Error)
      set_state(space.id, SpaceState::Error,
                "the space's node " + space.node + " is not configured on this server");
    return;
  }
  if (node_unreachable(node->name())) return;  // kept as it was until the node answers
  Observation seen;
  try {
    seen = node->observe(space);
  } catch (const std::exception& e) {
    // The node cannot be asked: reported, the space's state left as it was.
    events_.publish(event::kReconcileError, space.id, {{"error", e.what()}});
    return;
  }
  if (seen.state == MachineState::Failed || seen.state == MachineState::Gone) {
    if (space.state != SpaceState::Error || space.error != seen.detail)
      set_state(space.id, SpaceState::Error, seen.detail);
    return;
  }
  // A space its user stopped stays off across a host reboot (older servers left autostart on).
  if (space.desired_state == store::DesiredState::Stopped) node->stay_off(space);
  const auto state = space_state_of(seen.state);
  // An error stays until the machine runs again.
  if (space.state == SpaceState::Error && state != SpaceState::Running) return;
  if (state != space.state) set_state(space.id, state);
}

void Engine::report_orphans() {
  // What bowline made but the store does not know: reported, never deleted on a guess.
  const auto spaces = store_.spaces().list();
  for (auto* node : nodes_) {
    if (node_unreachable(node->name())) continue;
    std::set<std::string> known;
    for (const auto& space : spaces)
      if (on_node(space, *node)) known.insert(space.domain_name);
    for (auto& orphan : node->orphans(known)) {
      {
        std::lock_guard lock(orphans_mutex_);
        if (!reported_orphans_.insert(node->name() + ":" + orphan.key).second) continue;
      }
      orphan.payload["node"] = node->name();
      events_.publish(event::kReconcileOrphan, std::nullopt, orphan.payload);
    }
  }
}

}  // namespace bowline::engine
