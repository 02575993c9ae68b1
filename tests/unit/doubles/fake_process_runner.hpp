// The stand-in for util::ProcessRunner in unit tests: runs nothing, records every command (and
// its timeout) and answers as the test scripted it. An answer comes from the first of: the
// queue of next answers, the answer for that program, `respond`, then `fallback` (exit 0, no
// output). Safe to call from several threads; a test that reads `calls` while others still
// run takes `mutex`.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "util/process.hpp"

namespace bowline::doubles {

class FakeProcessRunner final : public util::ProcessRunner {
 public:
  using Argv = std::vector<std::string>;
  using Respond = std::function<std::optional<util::ProcessResult>(const Argv&)>;

  FakeProcessRunner() = default;
  explicit FakeProcessRunner(Respond respond_with) : respond(std::move(respond_with)) {}

  util::ProcessResult run(const Argv& argv, std::chrono::milliseconds timeout) override {
    std::lock_guard lock(mutex);
    calls.push_back(argv);
    timeouts.push_back(timeout);
    if (!next.empty()) {
      auto result = std::move(next.front());
      next.pop_front();
      return result;
    }
    if (!argv.empty()) {
      const auto it = by_program.find(argv[0]);
      if (it != by_program.end()) return it->second;
    }
    if (respond) {
      if (auto result = respond(argv)) return *result;
    }
    return fallback;
  }

  // The next call not yet answered gets this.
  void answer_next(int exit_code, std::string out = "", std::string err = "") {
    std::lock_guard lock(mutex);
    next.push_back({exit_code, std::move(out), std::move(err), false});
  }
  // Whether some call ran exactly `argv`.
  bool ran(const Argv& argv) {
    std::lock_guard lock(mutex);
    for (const auto& call : calls)
      if (call == argv) return true;
    return false;
  }
  std::size_t count() {
    std::lock_guard lock(mutex);
    return calls.size();
  }

  std::deque<util::ProcessResult> next;                   // answered first, in order
  std::map<std::string, util::ProcessResult> by_program;  // argv[0] -> its answer
  Respond respond;  // called under `mutex`: it must not call this runner's methods
  util::ProcessResult fallback{0, "", "", false};
  std::vector<Argv> calls;
  std::vector<std::chrono::milliseconds> timeouts;
  std::mutex mutex;
};

}  // namespace bowline::doubles
