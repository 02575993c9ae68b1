// What the stats sampler keeps of a space: rates between two of its machine's samples
// (StatsPoint), and a fixed ring of them per space, so its memory is bounded by the
// history's length whatever the uptime.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "engine/node.hpp"

namespace bowline::engine {

// The rates over the interval that ends at `time_ms`, and memory at that time. NaN: not known
// (the node does not report it; the first sample of a machine; a machine that restarted in
// between). Floats: 7 digits are plenty for a chart, and a point stays at 48 bytes.
struct StatsPoint {
  static constexpr float kUnknown = std::numeric_limits<float>::quiet_NaN();
  std::int64_t time_ms = 0;           // wall clock, Unix milliseconds
  float cpu_percent = kUnknown;       // of the machine's vCPUs: 100 is all of them busy
  float memory_used = kUnknown;       // bytes the guest uses, without its page cache
  float memory_available = kUnknown;  // bytes the guest has in all
  float memory_rss = kUnknown;        // bytes the host holds for the machine
  float disk_read_bps = kUnknown, disk_write_bps = kUnknown;  // bytes per second
  float disk_reads_ps = kUnknown, disk_writes_ps = kUnknown;  // requests per second (IOPS)
  float net_rx_bps = kUnknown, net_tx_bps = kUnknown;         // bytes per second
};

// A machine's memory at `time_ms`, with no rates (its first sample).
StatsPoint memory_point(const MachineSample& sample, std::int64_t time_ms);
// Rates from `before` to `after`, `elapsed` apart (steady time), plus memory at `after`.
// CPU % is CPU time over elapsed time and the vCPUs (one when the node does not say). A
// counter that went back, or CPU time that did (the machine restarted), gives no rate.
StatsPoint rates_between(const MachineSample& before, const MachineSample& after,
                         std::chrono::nanoseconds elapsed, std::int64_t time_ms);

// The last `capacity` points, oldest first; the memory for all of them is taken at the first
// push and never grows.
class PointRing {
 public:
  explicit PointRing(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

  void push(const StatsPoint& point);
  std::size_t size() const { return points_.size(); }
  std::size_t capacity() const { return capacity_; }
  bool empty() const { return points_.empty(); }
  const StatsPoint& newest() const;  // not when empty
  // The points later than `since_ms`, oldest first.
  std::vector<StatsPoint> since(std::int64_t since_ms) const;
  // Bytes this ring holds at most (its points; the vector's own few bytes aside).
  static std::size_t bytes_for(std::size_t capacity) { return capacity * sizeof(StatsPoint); }

 private:
  std::size_t capacity_;
  std::vector<StatsPoint> points_;
  std::size_t next_ = 0;  // where the next push goes once full
};

}  // namespace bowline::engine
