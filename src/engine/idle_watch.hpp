// Which running spaces have sat idle long enough to be suspended: a space is busy
// while someone holds it open (a console, display, tunnel or terminal through the server:
// hold()), when it was just used (touch(): a start, a resume), and while its guest's CPU is at
// or above a threshold; idle otherwise. Logic only: the engine feeds it each stats round's
// CPU figures and suspends what due() returns.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "util/timer.hpp"

namespace bowline::engine {

struct IdleSettings {
  // A template without idleSuspend: how long its spaces may sit idle (server.idle.suspend_after;
  // 0: never).
  std::chrono::seconds suspend_after{0};
  // Below this share of its vCPUs (100: all busy) the guest counts as idle. An idle Debian
  // guest uses well under 1%; a build or a test run is far above.
  double cpu_percent = 5;
};

// A running space as one round sees it.
struct IdleCandidate {
  std::string space_id;
  std::chrono::seconds after{0};  // its limit; 0: never suspended
  // The CPU share of the last stats interval; nullopt: not known yet (a fresh machine).
  std::optional<double> cpu_percent;
};

class IdleWatch {
 public:
  explicit IdleWatch(util::Timer& timer) : timer_(timer), s_(std::make_shared<State>()) {}

  // The space counts as in use while the handle lives (shared: copies hold it too).
  std::shared_ptr<void> hold(const std::string& space_id);
  // Used now: its idle time starts again.
  void touch(const std::string& space_id);

  // One round over the running spaces: those idle for at least their limit, which start
  // afresh (a suspend that fails is tried again only after another whole limit). Spaces not
  // among `running` are forgotten.
  std::vector<std::string> due(const std::vector<IdleCandidate>& running, double cpu_threshold);
  // Since when the space has been idle (steady time); nullopt when busy or not watched.
  std::optional<util::Timer::TimePoint> idle_since(const std::string& space_id) const;
  int holders(const std::string& space_id) const;

 private:
  // Shared with the handles hold() gives out: one that outlives the watch is harmless.
  struct State {
    std::mutex mutex;
    std::map<std::string, int> holders;
    std::map<std::string, util::Timer::TimePoint> busy_at;  // last time each was seen busy
  };
  util::Timer& timer_;
  std::shared_ptr<State> s_;
};

}  // namespace bowline::engine
