#include "engine/disk_read_ahead.hpp"

#include <algorithm>

namespace bowline::engine {

DiskReadAhead::DiskReadAhead(image::GuestReader& disk, const std::vector<std::uint64_t>& clusters,
                             std::uint64_t cluster, std::uint64_t max_run, std::size_t depth,
                             OnRead on_read)
    : disk_(disk),
      clusters_(clusters),
      cluster_(cluster),
      max_run_(std::max(max_run, cluster)),
      depth_(std::max<std::size_t>(depth, 1)),
      on_read_(std::move(on_read)),
      reader_([this] { read_all(); }) {}

DiskReadAhead::~DiskReadAhead() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  reader_.join();
}

void DiskReadAhead::read_all() {
  try {
    for (std::size_t i = 0; i < clusters_.size();) {
      // A run of consecutive clusters, at most max_run_ bytes, read at once.
      std::size_t run = 1;
      while (i + run < clusters_.size() && clusters_[i + run] == clusters_[i] + run &&
             (run + 1) * cluster_ <= max_run_)
        ++run;
      const auto offset = clusters_[i] * cluster_;
      Run out;
      out.bytes.assign(run * cluster_, '\0');
      const auto readable = std::min<std::uint64_t>(out.bytes.size(), disk_.size() - offset);
      disk_.read(offset, out.bytes.data(), static_cast<std::uint32_t>(readable));
      if (on_read_) on_read_(out.bytes.data(), out.bytes.size());
      i += run;
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || ready_.size() < depth_; });
      if (stop_) return;
      ready_.push_back(std::move(out));
      lock.unlock();
      changed_.notify_all();
    }
  } catch (...) {
    std::lock_guard lock(mutex_);
    error_ = std::current_exception();
  }
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  changed_.notify_all();
}

std::optional<DiskReadAhead::Run> DiskReadAhead::next() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !ready_.empty() || done_; });
  if (!ready_.empty()) {
    auto run = std::move(ready_.front());
    ready_.pop_front();
    lock.unlock();
    changed_.notify_all();
    return run;
  }
  if (error_) std::rethrow_exception(error_);
  return std::nullopt;
}

}  // namespace bowline::engine
