// Suspend when idle: a running space is saved with its node's suspend (libvirt's
// managed save: memory to disk, QEMU exits) when nobody has it open and its guest's CPU has
// been low for its idleSuspend, and anything that uses it resumes it where it was: a start, a
// console, display, tunnel or terminal (wake), a pool claim.
#include <cmath>
#include <thread>

#include "engine/engine.hpp"
#include "engine/event_kinds.hpp"

namespace bowline::engine {

using store::SpaceState;

namespace {

// "90s", "30m", "2h": how people wrote it.
std::string spoken(std::chrono::seconds d) {
  const auto s = d.count();
  if (s % 3600 == 0) return std::to_string(s / 3600) + "h";
  if (s % 60 == 0) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

bool suspended(SpaceState state) {
  return state == SpaceState::Suspended || state == SpaceState::Suspending;
}

// QEMU cannot save a passed-through device's state: such a space is never suspended.
bool passes_through(const spec::Spec& spec) {
  return !spec.devices.empty() || !spec.gpus.empty();
}

}  // namespace

std::chrono::seconds Engine::idle_limit(const spec::Spec& spec) const {
  if (passes_through(spec)) return std::chrono::seconds(0);
  return spec.idle_suspend.value_or(settings_.idle.suspend_after);
}

void Engine::describe_idle(SpaceView& view) {
  try {
    view.idle_after = idle_limit(space_spec(view.space));
  } catch (const std::exception&) {
    return;  // a template that no longer expands says so when the space starts
  }
  if (view.space.state != SpaceState::Running || view.idle_after.count() == 0) return;
  if (const auto since = idle_.idle_since(view.space.id))
    view.idle_for = std::chrono::duration_cast<std::chrono::seconds>(timer_.now() - *since);
}

std::int64_t Engine::suspend_space(const std::string& id, const std::string& reason,
                                   bool waiting_member) {
  auto space = require(id);
  auto& at = node_of(space);
  at.capabilities().require(Capability::Suspend, at.name());
  if (space.state != SpaceState::Running)
    throw EngineError(EngineError::Kind::Conflict, "the space " + space.name + " is " +
                                                       store::to_string(space.state) +
                                                       ": only a running space can be suspended");
  if (passes_through(space_spec(space)))
    throw EngineError(EngineError::Kind::Conflict,
                      "the space " + space.name +
                          " has passed-through devices, whose state cannot be saved: stop it");
  return enqueue(
      space, "suspend",
      [this, id, reason, waiting_member](std::int64_t op) {
        // Its node as it is now: a move queued before this one may have changed it.
        auto& node = node_of(require(id));
        store::Space current;
        {
          // A pool member is suspended only while nobody has claimed it: the claim's pick and
          // this check are one at a time, and a claim passes over a member being suspended.
          std::lock_guard lock(claims_mutex_);
          current = require(id);
          if (waiting_member && (current.owner_id || !current.pool_id)) return;
          if (current.state != SpaceState::Running)
            throw EngineError(EngineError::Kind::Conflict,
                              "the space became " + std::string(store::to_string(current.state)) +
                                  " before its suspend began");
          set_state(id, SpaceState::Suspending);
        }
        Observation seen;
        try {
          seen = node.suspend(current, progress_for({op}, id));
        } catch (...) {
          // Nothing was saved: the space is what its node says (running, as before).
          try {
            set_state(id, space_state_of(node.observe(current).state));
          } catch (const std::exception&) {
            set_state(id, SpaceState::Running);
          }
          throw;
        }
        withdraw_ports(id);
        store_.spaces().set_suspended(id, store_.clock().now_unix_ms(), reason);
        settle(id, seen);
        events_.publish(event::kSpaceSuspended, id, {{"reason", reason}});
        progress(op, id, "suspended", 100);
      },
      /*failure_is_error=*/false);
}

std::int64_t Engine::resume_space(const std::string& id, const std::string& why) {
  auto space = require(id);
  node_of(space);  // its node must be configured here
  if (!suspended(space.state))
    throw EngineError(
        EngineError::Kind::Conflict,
        "the space " + space.name + " is " + store::to_string(space.state) + ", not suspended");
  store_.spaces().set_desired_state(id, store::DesiredState::Running);
  return enqueue(space, "resume", [this, id, why](std::int64_t op) {
    // Its node as it is now: a move queued before this one may have changed it.
    auto& node = node_of(require(id));
    const auto current = require(id);
    // A suspend that failed left it running; another resume was first.
    if (current.state == SpaceState::Running) {
      progress(op, id, "running", 100);
      return;
    }
    if (current.state != SpaceState::Suspended)
      throw EngineError(
          EngineError::Kind::Conflict,
          "the space is " + std::string(store::to_string(current.state)) + ", not suspended");
    const auto began = timer_.now();
    set_state(id, SpaceState::Starting);
    const auto seen = node.resume(current, progress_for({op}, id));
    settle(id, seen);
    idle_.touch(id);
    publish_ports(id);
    const double seconds = std::chrono::duration<double>(timer_.now() - began).count();
    events_.publish(event::kSpaceResumed, id,
                    {{"reason", why}, {"seconds", std::round(seconds * 1000) / 1000}});
    progress(op, id, "running", 100);
  });
}

// Real time, not the engine's timer: this polls the store for work other threads do, and a
// test's manual timer would never move on its own.
void Engine::wait_for_operation(std::int64_t op, std::chrono::seconds timeout,
                                const std::string& what) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto row = store_.operations().get(op);
    if (!row) return;  // pruned: long over
    if (row->finished()) {
      if (row->state == store::OperationState::Failed)
        throw EngineError(EngineError::Kind::Conflict, what + " failed: " + row->error);
      return;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      throw EngineError(EngineError::Kind::Conflict,
                        what + " is still running after " + spoken(timeout) + ": try again");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void Engine::wake(const std::string& space_id, const std::string& why) {
  const auto space = store_.spaces().get(space_id);
  if (!space || !suspended(space->state)) return;
  wait_for_operation(resume_space(space_id, why), std::chrono::minutes(3),
                     "resuming the space " + space->name);
}

std::shared_ptr<void> Engine::hold(const std::string& space_id) {
  return idle_.hold(space_id);
}

// A member waits for its claim as memory on disk, once its guest is ready (cloud-init done, so
// its agent runs): a pool of ten costs ten saved images, not ten guests' memory.
void Engine::suspend_waiting_members() {
  if (!settings_.pools_wait_suspended) return;
  for (const auto& space : store_.read_spaces().list()) {
    if (!space.pool_id || space.owner_id || space.state != SpaceState::Running) continue;
    auto& node = node_of(space);
    if (!node.capabilities().supports(Capability::Suspend)) continue;
    try {
      if (passes_through(space_spec(space))) continue;  // never suspended
    } catch (const std::exception&) {
      continue;  // a template that no longer expands: its start says so
    }
    const auto ready = node.readiness(space);
    if (!ready || !ready->finished || ready->failed) continue;
    try {
      suspend_space(space.id, "ready: waits for its claim suspended", /*waiting_member=*/true);
    } catch (const std::exception& e) {
      events_.publish(event::kPoolError, space.id,
                      {{"member", space.name}, {"error", std::string("suspend: ") + e.what()}});
    }
  }
}

void Engine::suspend_idle() {
  suspend_waiting_members();
  // The spaces in one read (the reader's connection: never waiting for the engine's writes);
  // only nodes that report samples (libvirt) have spaces in the sampler's running set.
  std::map<std::string, store::Space> spaces;
  for (auto& space : store_.read_spaces().list())
    if (space.state == SpaceState::Running) spaces.emplace(space.id, std::move(space));
  std::vector<IdleCandidate> candidates;
  std::map<std::string, std::chrono::seconds> limits;
  for (const auto& seen : stats_->running()) {
    const auto space = spaces.find(seen.space_id);
    if (space == spaces.end()) continue;
    std::chrono::seconds after{0};
    try {
      after = idle_limit(space_spec(space->second));
    } catch (const std::exception&) {
      continue;
    }
    if (after.count() == 0) continue;
    IdleCandidate c{seen.space_id, after, std::nullopt};
    if (seen.latest && !std::isnan(seen.latest->cpu_percent))
      c.cpu_percent = seen.latest->cpu_percent;
    limits[seen.space_id] = after;
    candidates.push_back(std::move(c));
  }
  for (const auto& id : idle_.due(candidates, settings_.idle.cpu_percent)) {
    try {
      suspend_space(id, "idle for " + spoken(limits[id]));
    } catch (const std::exception& e) {
      events_.publish(event::kReconcileError, id,
                      {{"error", std::string("idle suspend: ") + e.what()}});
    }
  }
}

}  // namespace bowline::engine
