#include "engine/disk_read_ahead.hpp"

#include <algorithm>

namespace bowline::engine {

DiskReadAhead::DiskReadAhead(const std::vector<image::GuestReader*>& disks,
                             const std::vector<std::uint64_t>& clusters, std::uint64_t cluster,
                             std::uint64_t max_run, std::size_t depth, OnRead on_read)
    : cluster_(cluster), depth_(std::max<std::size_t>(depth, 1)), on_read_(std::move(on_read)) {
  // Runs of consecutive clusters, at most max_run bytes each, each read at once.
  const auto most = std::max<std::uint64_t>(max_run / std::max<std::uint64_t>(cluster, 1), 1);
  for (std::size_t i = 0; i < clusters.size();) {
    std::uint64_t run = 1;
    while (i + run < clusters.size() && clusters[i + run] == clusters[i] + run && run < most) ++run;
    spans_.push_back({clusters[i], run});
    i += run;
  }
  for (auto* disk : disks) readers_.emplace_back([this, disk] { read_with(*disk); });
}

DiskReadAhead::~DiskReadAhead() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  for (auto& reader : readers_) reader.join();
}

void DiskReadAhead::read_with(image::GuestReader& disk) {
  try {
    for (;;) {
      std::size_t i = 0;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] {
          return stop_ || error_ || claimed_ >= spans_.size() || claimed_ < delivered_ + depth_;
        });
        if (stop_ || error_ || claimed_ >= spans_.size()) break;
        i = claimed_++;
      }
      const auto offset = spans_[i].first * cluster_;
      Run out;
      out.bytes.assign(spans_[i].count * cluster_, '\0');
      if (offset < disk.size()) {
        const auto readable = std::min<std::uint64_t>(out.bytes.size(), disk.size() - offset);
        disk.read(offset, out.bytes.data(), static_cast<std::uint32_t>(readable));
      }
      std::unique_lock lock(mutex_);
      if (on_read_) {
        // In order: whoever read the run before this one has shown it first.
        changed_.wait(lock, [&] { return stop_ || error_ || seen_ == i; });
        if (stop_ || error_) break;
        lock.unlock();
        on_read_(out.bytes.data(), out.bytes.size());
        lock.lock();
      }
      ++seen_;
      ready_.emplace(i, std::move(out));
      lock.unlock();
      changed_.notify_all();
    }
  } catch (...) {
    std::lock_guard lock(mutex_);
    if (!error_) error_ = std::current_exception();
  }
  {
    std::lock_guard lock(mutex_);
    ++finished_;
  }
  changed_.notify_all();
}

std::optional<DiskReadAhead::Run> DiskReadAhead::next() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return ready_.count(delivered_) > 0 || finished_ == readers_.size(); });
  if (const auto it = ready_.find(delivered_); it != ready_.end()) {
    auto run = std::move(it->second);
    ready_.erase(it);
    ++delivered_;
    lock.unlock();
    changed_.notify_all();
    return run;
  }
  if (error_) std::rethrow_exception(error_);
  return std::nullopt;
}

}  // namespace bowline::engine
