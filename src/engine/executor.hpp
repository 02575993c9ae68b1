// Background work: a few worker threads, and a per-key lock so that operations on one space
// run one after another while different spaces proceed in parallel.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bowline::engine {

class Executor {
 public:
  explicit Executor(unsigned threads);
  ~Executor();  // finishes queued work, then joins
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Runs `task` on a worker while holding `key`'s lock (tasks of one key run in order).
  void submit(std::string key, std::function<void()> task);
  // Blocks until every submitted task has finished (tests, shutdown).
  void drain();

 private:
  void work();
  std::mutex& key_lock(const std::string& key);

  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<std::pair<std::string, std::function<void()>>> queue_;
  std::map<std::string, std::unique_ptr<std::mutex>> key_locks_;
  unsigned busy_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace bowline::engine
