#include "engine/node.hpp"

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

}  // namespace bowline::engine
