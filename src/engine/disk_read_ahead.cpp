#include "engine/disk_read_ahead.hpp"

#include <algorithm>

namespace bowline::engine {

DiskReadAhead::DiskReadAhead(std::size_t readers, std::vector<std::uint64_t> run_sizes, Fill fill,
                             std::size_t depth, OnRead on_read)
    : sizes_(std::move(run_sizes)),
      fill_(std::move(fill)),
      depth_(std::max<std::size_t>(depth, 1)),
      on_read_(std::move(on_read)) {
  for (std::size_t r = 0; r < std::max<std::size_t>(readers, 1); ++r)
    readers_.emplace_back([this, r] { read_with(r); });
}

DiskReadAhead::~DiskReadAhead() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  for (auto& reader : readers_) reader.join();
}

void DiskReadAhead::read_with(std::size_t reader) {
  try {
    for (;;) {
      std::size_t i = 0;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] {
          return stop_ || error_ || claimed_ >= sizes_.size() || claimed_ < delivered_ + depth_;
        });
        if (stop_ || error_ || claimed_ >= sizes_.size()) break;
        i = claimed_++;
      }
      Run out;
      {
        std::lock_guard lock(mutex_);
        if (!spare_.empty()) {
          out.bytes = std::move(spare_.back());
          spare_.pop_back();
        }
      }
      // A recycled buffer keeps its old bytes: fill writes every byte of the run.
      out.bytes.resize(sizes_[i]);
      fill_(reader, i, out.bytes.data(), out.bytes.size());
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

void DiskReadAhead::recycle(Run&& run) {
  std::lock_guard lock(mutex_);
  // Enough for every run that can be in memory at once; more would only hold memory.
  if (spare_.size() < depth_ + readers_.size()) spare_.push_back(std::move(run.bytes));
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
