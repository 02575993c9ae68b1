#include "engine/executor.hpp"

namespace bowline::engine {

Executor::Executor(unsigned threads) {
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { work(); });
}

Executor::~Executor() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

std::mutex& Executor::key_lock(const std::string& key) {
  auto& slot = key_locks_[key];
  if (!slot) slot = std::make_unique<std::mutex>();
  return *slot;
}

void Executor::submit(std::string key, std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    queue_.emplace_back(std::move(key), std::move(task));
  }
  wake_.notify_one();
}

void Executor::drain() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && busy_ == 0; });
}

void Executor::work() {
  for (;;) {
    std::pair<std::string, std::function<void()>> item;
    std::mutex* per_key = nullptr;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and nothing left
      item = std::move(queue_.front());
      queue_.pop_front();
      per_key = &key_lock(item.first);
      ++busy_;
    }
    {
      std::lock_guard key_guard(*per_key);
      try {
        item.second();
      } catch (...) {
        // Tasks report their own failures; one that escapes must not take the worker down.
      }
    }
    std::lock_guard lock(mutex_);
    --busy_;
    if (queue_.empty() && busy_ == 0) idle_.notify_all();
  }
}

}  // namespace bowline::engine
