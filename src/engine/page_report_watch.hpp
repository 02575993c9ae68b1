// When a guest has handed its freed pages back (virtio-balloon free page reporting): QEMU's
// resident set falls in steps, one batch every two seconds or so, after the guest dropped its
// page cache. A suspend saves what is still resident, so it waits for the steps to stop.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

namespace bowline::engine {

class PageReportWatch {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  // Settled once the resident set has not fallen by `step_kib` for `quiet`: longer than the
  // guest's reporting delay (2 s in Linux), so that one more batch would have shown.
  explicit PageReportWatch(std::chrono::milliseconds quiet = std::chrono::milliseconds(3000),
                           std::uint64_t step_kib = 4096)
      : quiet_(quiet), step_kib_(step_kib) {}
  // One reading of QEMU's resident set, in KiB, taken at `at`; true once it has settled.
  bool settled(TimePoint at, std::uint64_t rss_kib);
  // What the resident set fell by since the first reading, in KiB.
  std::uint64_t freed_kib() const { return first_kib_ - low_kib_; }

 private:
  std::chrono::milliseconds quiet_;
  std::uint64_t step_kib_;
  std::optional<TimePoint> since_;  // of the last fall (or the first reading)
  std::uint64_t first_kib_ = 0, low_kib_ = 0;
};

}  // namespace bowline::engine
