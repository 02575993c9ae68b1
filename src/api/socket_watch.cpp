#include "api/socket_watch.hpp"

#include <vector>

namespace bowline::api {

SocketWatch::SocketWatch(std::chrono::milliseconds interval) : interval_(interval) {
  thread_ = std::thread([this] { run(); });
}

SocketWatch::~SocketWatch() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::uint64_t SocketWatch::add(Check still_allowed, std::function<void()> close) {
  std::lock_guard lock(mutex_);
  const auto id = next_++;
  entries_.emplace(id, Entry{std::move(still_allowed), std::move(close)});
  return id;
}

void SocketWatch::remove(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  entries_.erase(id);
}

std::size_t SocketWatch::watched() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

void SocketWatch::run() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, interval_, [this] { return stop_; });
    if (stop_) break;
    // The checks read the store: run them without the lock, on a copy.
    const auto entries = entries_;
    lock.unlock();
    std::vector<std::uint64_t> failed;
    for (const auto& [id, entry] : entries) {
      bool allowed = false;
      try {
        allowed = entry.still_allowed();
      } catch (...) {
      }
      if (!allowed) {
        failed.push_back(id);
        entry.close();
      }
    }
    lock.lock();
    for (auto id : failed) entries_.erase(id);
  }
}

}  // namespace bowline::api
