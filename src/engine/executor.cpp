#include "engine/executor.hpp"

#include <algorithm>

namespace bowline::engine {

Executor::Executor(unsigned threads, unsigned max_threads)
    : max_threads_(std::max(threads, max_threads)) {
  std::lock_guard lock(mutex_);
  for (unsigned i = 0; i < threads; ++i) spawn_locked();
}

Executor::~Executor() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  // No worker is started once stopping_ is set, so the list no longer changes.
  for (auto& t : threads_) t.join();
}

void Executor::spawn_locked() {
  threads_.emplace_back([this] { work(); });
}

unsigned Executor::workers() const {
  std::lock_guard lock(mutex_);
  return static_cast<unsigned>(threads_.size());
}

void Executor::submit(std::string key, std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    auto& tasks = pending_[key];
    tasks.push_back(std::move(task));
    ++queued_;
    // A key already running (or already ready) is picked up again when its task ends.
    bool running_or_ready = tasks.size() > 1;
    if (!running_or_ready)
      for (const auto& k : ready_) running_or_ready = running_or_ready || k == key;
    if (!running_or_ready) {
      ready_.push_back(std::move(key));
      // Every worker busy (with other keys, perhaps stuck): this key gets a worker of its own
      // rather than waiting for theirs to end.
      if (!stopping_ && busy_ + ready_.size() > threads_.size() && threads_.size() < max_threads_)
        spawn_locked();
    }
  }
  wake_.notify_one();
}

void Executor::drain() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return queued_ == 0 && busy_ == 0; });
}

void Executor::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stopping_ || !ready_.empty(); });
    if (ready_.empty()) return;  // stopping, and nothing left to run
    const std::string key = std::move(ready_.front());
    ready_.pop_front();
    auto task = std::move(pending_[key].front());
    --queued_;
    ++busy_;
    lock.unlock();
    try {
      task();
    } catch (...) {
      // Tasks report their own failures; one that escapes must not take the worker down.
    }
    lock.lock();
    --busy_;
    auto& tasks = pending_[key];
    tasks.pop_front();  // the task that just ran stayed at the front, marking the key busy
    if (tasks.empty()) {
      pending_.erase(key);
    } else {
      ready_.push_back(key);
      wake_.notify_one();
    }
    if (queued_ == 0 && busy_ == 0) idle_.notify_all();
  }
}

}  // namespace bowline::engine
