// Snapshots: taken, restored and deleted as operations on the space's queue, so
// none overlaps a start, a stop or another snapshot of the same space. The node holds the data
// (internal qcow2 snapshots on libvirt); the store holds what bowline says of each.
#include <algorithm>
#include <set>

#include "engine/engine.hpp"
#include "engine/event_kinds.hpp"
#include "engine/identifiers.hpp"

namespace bowline::engine {

using store::SpaceState;

namespace {

// Names bowline uses for its own short-lived snapshots (a clone of a space as it is now).
constexpr std::string_view kReservedPrefix = "bowline-";

void check_snapshot_name(const std::string& name) {
  check_name("snapshot name", name);
  if (name.starts_with(kReservedPrefix))
    throw EngineError(
        EngineError::Kind::Invalid,
        "snapshot names starting with " + std::string(kReservedPrefix) + " are bowline's own");
}

bool settled(SpaceState state) {
  return state == SpaceState::Running || state == SpaceState::Stopped;
}

EngineError unsettled(const store::Space& space, const std::string& what) {
  return EngineError(EngineError::Kind::Conflict, "the space " + space.name + " is " +
                                                      store::to_string(space.state) + ": " + what +
                                                      " needs it running or stopped");
}

}  // namespace

std::vector<store::Snapshot> Engine::snapshots_of(const std::string& space_id) {
  require(space_id);
  return store_.read_snapshots().list_for_space(space_id);
}

store::Snapshot Engine::require_snapshot(const store::Space& space, const std::string& name) {
  auto found = snapshot_rows_.find(space.id, name);
  if (!found)
    throw EngineError(EngineError::Kind::NotFound,
                      "the space " + space.name + " has no snapshot named " + name);
  return *found;
}

std::int64_t Engine::snapshot_space(const std::string& id, const std::string& name, bool memory) {
  const auto space = require(id);
  check_snapshot_name(name);
  auto& at = node_of(space);
  at.capabilities().require(memory ? Capability::MemorySnapshots : Capability::Snapshots,
                            at.name());
  if (!settled(space.state)) throw unsettled(space, "a snapshot");
  if (space.applied_template_revision == 0)
    throw EngineError(EngineError::Kind::Conflict,
                      "the space " + space.name + " has never started: it has no disk yet");
  if (snapshot_rows_.find(id, name))
    throw EngineError(EngineError::Kind::Conflict,
                      "the space " + space.name + " already has a snapshot named " + name);
  return enqueue(
      space, "snapshot",
      [this, id, name, memory](std::int64_t op) {
        // Its node as it is now: a move queued before this one may have changed it.
        auto& node = node_of(require(id));
        const auto current = require(id);
        if (!settled(current.state)) throw unsettled(current, "a snapshot");
        progress(op, id, memory ? "saving disks and memory" : "taking the snapshot", 10);
        const auto taken = node.take_snapshot(current, name, memory);
        store::Snapshot row;
        try {
          // What it holds counts against the owner's disk quota; over it, it goes again.
          if (current.owner_id) {
            const auto owner = store_.users().get(*current.owner_id);
            const Usage asked{0, 0, 0, taken.size_bytes};
            if (owner)
              if (const auto why = quota_refusal(owner->username, usage_of_owner(owner->id), asked,
                                                 limits_of(*owner)))
                throw EngineError(EngineError::Kind::Forbidden, *why);
          }
          row.space_id = id;
          row.name = name;
          row.memory = taken.memory;
          row.best_effort = taken.best_effort;
          row.running = taken.running;
          row.template_revision = current.applied_template_revision;
          row.applied_parts = current.applied_parts;
          row.size_bytes = taken.size_bytes;
          row = snapshot_rows_.create(row);
        } catch (...) {
          try {
            node.delete_snapshot(current, name);
          } catch (...) {
          }
          throw;
        }
        nlohmann::json said{{"name", name},
                            {"memory", row.memory},
                            {"bestEffort", row.best_effort},
                            {"sizeBytes", row.size_bytes}};
        // Why it is best effort, and what went wrong around it, is kept with its event.
        if (!taken.best_effort_reason.empty()) said["bestEffortReason"] = taken.best_effort_reason;
        if (!taken.warning.empty()) said["warning"] = taken.warning;
        events_.publish(event::kSnapshotCreated, id, said);
        progress(op, id,
                 taken.best_effort ? "snapshot taken, best effort: " + taken.best_effort_reason
                 : !taken.warning.empty() ? "snapshot taken; " + taken.warning
                                          : std::string("snapshot taken"),
                 100);
      },
      false);
}

std::int64_t Engine::restore_space(const std::string& id, const std::string& name, bool stop) {
  const auto space = require(id);
  auto& at = node_of(space);
  at.capabilities().require(Capability::Snapshots, at.name());
  const auto snapshot = require_snapshot(space, name);
  refuse_while_cloned(space, "a restore");
  if (!settled(space.state)) throw unsettled(space, "a restore");
  if (space.state == SpaceState::Running && !stop)
    throw EngineError(EngineError::Kind::Conflict,
                      "the space " + space.name +
                          " is running: a restore needs it stopped (--stop powers it off first)");
  return enqueue(space, "restore", [this, id, snapshot](std::int64_t op) {
    // Its node as it is now: a move queued before this one may have changed it.
    auto& node = node_of(require(id));
    const auto current = require(id);
    const bool was_running = current.state == SpaceState::Running;
    if (was_running) {
      // The node powers it off: what it runs now is what the restore throws away.
      set_state(id, SpaceState::Stopping);
      node.stay_off(current);
      withdraw_ports(id);
    }
    // Running memory resumes the machine as it was defined then: not once an admin changed the
    // template since (a device, the network, the memory given). Then the disks come back and
    // the machine starts anew with today's definition, and the restore says so.
    const auto tmpl = store_.templates().get(current.template_id);
    const bool redefined =
        snapshot.memory && (!tmpl || tmpl->revision != snapshot.template_revision);
    const bool memory = snapshot.memory && !redefined;
    const std::string note =
        redefined ? "the template changed since " + snapshot.name + " was taken (revision " +
                        std::to_string(snapshot.template_revision) + ", now " +
                        (tmpl ? std::to_string(tmpl->revision) : std::string("gone")) +
                        "): its disks are restored and the machine starts anew, without its memory"
                  : std::string();
    progress(op, id, redefined ? note : "restoring " + snapshot.name, 40);
    const auto seen = node.restore_snapshot(current, snapshot.name, memory);
    nlohmann::json said{{"name", snapshot.name}, {"memory", memory}};
    if (redefined) said["note"] = note;
    events_.publish(event::kSnapshotRestored, id, said);
    if (seen.state == MachineState::Running) {
      // The machine runs as it did then: with the definition of that time.
      store_.spaces().set_applied(id, snapshot.template_revision, snapshot.applied_parts);
      store_.spaces().set_desired_state(id, store::DesiredState::Running);
      settle(id, seen);
      publish_ports(id);
      progress(op, id, "running", 100);
      return;
    }
    settle(id, seen);
    if (!was_running && !redefined) {
      store_.spaces().set_desired_state(id, store::DesiredState::Stopped);
      progress(op, id, "stopped", 100);
      return;
    }
    // Stopped for the restore: it runs again, from the restored disks.
    bring_up(id, {op, 50, 100}, {true, false, false});
  });
}

void Engine::reconcile_snapshots(const store::Space& space,
                                 const std::vector<store::Operation>& operations) {
  const bool touched = std::any_of(operations.begin(), operations.end(), [](const auto& op) {
    return op.kind == "snapshot" || op.kind == "snapshot-delete";
  });
  if (!touched) return;
  executor_.submit(space.id, [this, id = space.id] {
    const auto current = store_.spaces().get(id);
    if (!current) return;
    try {
      auto& node = node_of(*current);
      const auto names = node.snapshot_names(*current);
      if (!names) return;
      std::set<std::string> recorded;
      for (const auto& row : snapshot_rows_.list_for_space(id)) {
        recorded.insert(row.name);
        if (std::find(names->begin(), names->end(), row.name) == names->end())
          snapshot_rows_.remove(row.id);
      }
      for (const auto& name : *names)
        if (!recorded.count(name)) node.delete_snapshot(*current, name);
    } catch (const std::exception& e) {
      if (settings_.log)
        settings_.log("bowline server: the snapshots of " + current->name +
                      " could not be checked after a restart: " + e.what());
    }
  });
}

// A restore cut short: libvirt may have reverted the disks or not, and a revert to a snapshot of
// a running machine leaves it paused until the restore turns it off. Neither is the snapshot
// the user asked for with any certainty: the machine goes off, the space is stopped and the
// operation fails saying so, for the user to restore again.
bool Engine::reconcile_restore(const store::Space& space,
                               std::vector<store::Operation>& operations) {
  if (operations.empty() || operations.back().kind != "restore" ||
      (space.state != SpaceState::Stopped && space.state != SpaceState::Stopping))
    return false;
  end_interrupted(operations,
                  "the server stopped during the restore; the space is stopped: restore again");
  // Stopping until the machine is off: nobody reads "stopped" while libvirt still reverts.
  if (space.state != SpaceState::Stopping) set_state(space.id, SpaceState::Stopping);
  executor_.submit(space.id, [this, id = space.id] {
    const auto current = store_.spaces().get(id);
    if (!current) return;
    try {
      auto& node = node_of(*current);
      // libvirt finishes a revert it started without the server: turned off before it ends,
      // the machine would come back paused after it.
      node.wait_for_jobs(*current);
      node.stay_off(*current);
      Progress quiet;  // the operation has ended: its steps are no one's to follow
      quiet.step = [](const std::string&, int) {};
      node.shut_down(*current, quiet);
      store_.spaces().set_desired_state(id, store::DesiredState::Stopped);
      set_state(id, SpaceState::Stopped);
    } catch (const std::exception& e) {
      set_state(id, SpaceState::Error, std::string("after an interrupted restore: ") + e.what());
    }
  });
  return true;
}

std::int64_t Engine::delete_snapshot(const std::string& id, const std::string& name) {
  const auto space = require(id);
  auto& at = node_of(space);
  at.capabilities().require(Capability::Snapshots, at.name());
  const auto snapshot = require_snapshot(space, name);
  refuse_while_cloned(space, "deleting a snapshot");
  return enqueue(
      space, "snapshot-delete",
      [this, id, snapshot](std::int64_t op) {
        // Its node as it is now: a move queued before this one may have changed it.
        auto& node = node_of(require(id));
        progress(op, id, "deleting " + snapshot.name, 10);
        node.delete_snapshot(require(id), snapshot.name);
        snapshot_rows_.remove(snapshot.id);
        events_.publish(event::kSnapshotDeleted, id, {{"name", snapshot.name}});
        progress(op, id, "deleted", 100);
      },
      false);
}

}  // namespace bowline::engine
