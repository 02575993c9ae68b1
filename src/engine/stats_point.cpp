#include "engine/stats_point.hpp"

#include <algorithm>
#include <stdexcept>

namespace bowline::engine {

namespace {

float as_float(const std::optional<std::uint64_t>& value) {
  return value ? static_cast<float>(*value) : StatsPoint::kUnknown;
}

// Per second from one counter reading to the next; unknown when either is, or it went back.
float rate(const std::optional<std::uint64_t>& before, const std::optional<std::uint64_t>& after,
           double seconds) {
  if (!before || !after || *after < *before) return StatsPoint::kUnknown;
  return static_cast<float>(static_cast<double>(*after - *before) / seconds);
}

}  // namespace

StatsPoint memory_point(const MachineSample& sample, std::int64_t time_ms) {
  StatsPoint point;
  point.time_ms = time_ms;
  // The guest's own view when its balloon driver reports it; else only what it was given.
  if (sample.memory_available) {
    point.memory_available = as_float(sample.memory_available);
    if (sample.memory_unused) {
      const auto idle = *sample.memory_unused + sample.memory_caches.value_or(0);
      const auto used = *sample.memory_available > idle ? *sample.memory_available - idle : 0;
      point.memory_used = static_cast<float>(used);
    }
  } else {
    point.memory_available = as_float(sample.memory_bytes);
  }
  point.memory_rss = as_float(sample.memory_rss);
  return point;
}

StatsPoint rates_between(const MachineSample& before, const MachineSample& after,
                         std::chrono::nanoseconds elapsed, std::int64_t time_ms) {
  auto point = memory_point(after, time_ms);
  if (elapsed.count() <= 0) return point;
  // CPU time only grows while a machine runs: less than before is another run of it, whose
  // other counters started again from 0 too.
  if (before.cpu_ns && after.cpu_ns && *after.cpu_ns < *before.cpu_ns) return point;
  const double seconds = static_cast<double>(elapsed.count()) / 1e9;
  if (before.cpu_ns && after.cpu_ns) {
    const double vcpus = std::max(after.vcpus, 1u);
    point.cpu_percent = static_cast<float>(static_cast<double>(*after.cpu_ns - *before.cpu_ns) /
                                           (static_cast<double>(elapsed.count()) * vcpus) * 100);
  }
  point.disk_read_bps = rate(before.disk_read_bytes, after.disk_read_bytes, seconds);
  point.disk_write_bps = rate(before.disk_write_bytes, after.disk_write_bytes, seconds);
  point.disk_reads_ps = rate(before.disk_reads, after.disk_reads, seconds);
  point.disk_writes_ps = rate(before.disk_writes, after.disk_writes, seconds);
  point.net_rx_bps = rate(before.net_rx_bytes, after.net_rx_bytes, seconds);
  point.net_tx_bps = rate(before.net_tx_bytes, after.net_tx_bytes, seconds);
  return point;
}

void PointRing::push(const StatsPoint& point) {
  if (points_.size() < capacity_) {
    if (points_.empty()) points_.reserve(capacity_);
    points_.push_back(point);
    return;
  }
  points_[next_] = point;
  next_ = (next_ + 1) % capacity_;
}

const StatsPoint& PointRing::newest() const {
  if (points_.empty()) throw std::logic_error("PointRing::newest on an empty ring");
  if (points_.size() < capacity_) return points_.back();
  return points_[(next_ + capacity_ - 1) % capacity_];
}

std::vector<StatsPoint> PointRing::since(std::int64_t since_ms) const {
  std::vector<StatsPoint> out;
  out.reserve(points_.size());
  // Once full, the oldest is the one the next push replaces.
  const std::size_t start = points_.size() < capacity_ ? 0 : next_;
  for (std::size_t i = 0; i < points_.size(); ++i) {
    const auto& p = points_[(start + i) % points_.size()];
    if (p.time_ms > since_ms) out.push_back(p);
  }
  return out;
}

}  // namespace bowline::engine
