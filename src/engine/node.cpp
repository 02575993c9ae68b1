#include "engine/node.hpp"

#include "engine/engine_error.hpp"

namespace bowline::engine {

const char* to_string(MachineState state) {
  switch (state) {
    case MachineState::Running:
      return "running";
    case MachineState::Stopped:
      return "stopped";
    case MachineState::Starting:
      return "starting";
    case MachineState::Stopping:
      return "stopping";
    case MachineState::Failed:
      return "failed";
    case MachineState::Gone:
      return "gone";
    case MachineState::Suspended:
      return "suspended";
  }
  return "?";
}

store::SpaceState space_state_of(MachineState state) {
  switch (state) {
    case MachineState::Running:
      return store::SpaceState::Running;
    case MachineState::Stopped:
      return store::SpaceState::Stopped;
    case MachineState::Starting:
      return store::SpaceState::Starting;
    case MachineState::Stopping:
      return store::SpaceState::Stopping;
    case MachineState::Suspended:
      return store::SpaceState::Suspended;
    case MachineState::Failed:
    case MachineState::Gone:
      break;
  }
  return store::SpaceState::Error;
}

Progress Progress::part(int from, int to) const {
  auto at = [from, to](int percent) { return from + percent * (to - from) / 100; };
  Progress p;
  p.applied = applied;
  p.booting = booting;
  if (step)
    p.step = [step = step, at](const std::string& name, int percent) { step(name, at(percent)); };
  if (download)
    p.download = [download = download, at](const std::string& name, int percent, std::uint64_t done,
                                           std::uint64_t total) {
      download(name, at(percent), done, total);
    };
  return p;
}

namespace {
// Reached only on a node whose capabilities lack `what`; the engine asks them first.
[[noreturn]] void refuse_state(const Node& node, Capability what) {
  node.capabilities().require(what, node.name());
  throw EngineError(EngineError::Kind::Invalid,
                    std::string(describe(what)) + " are not implemented on node " + node.name());
}
}  // namespace

SnapshotTaken Node::take_snapshot(const store::Space&, const std::string&, bool) {
  refuse_state(*this, Capability::Snapshots);
}
Observation Node::restore_snapshot(const store::Space&, const std::string&, bool) {
  refuse_state(*this, Capability::Snapshots);
}
void Node::delete_snapshot(const store::Space&, const std::string&) {
  refuse_state(*this, Capability::Snapshots);
}
Observation Node::suspend(const store::Space&, const Progress&) {
  refuse_state(*this, Capability::Suspend);
}
Observation Node::resume(const store::Space&, const Progress&) {
  refuse_state(*this, Capability::Suspend);
}
void Node::export_files(const store::Space&, const std::filesystem::path&) {
  refuse_state(*this, Capability::Move);
}
void Node::import_files(const NodeSpace&, const std::filesystem::path&, const Progress&) {
  refuse_state(*this, Capability::Move);
}
void Node::copy_disk_at(const store::Space&, const std::string&, const std::filesystem::path&,
                        bool) {
  refuse_state(*this, Capability::Clone);
}

}  // namespace bowline::engine
