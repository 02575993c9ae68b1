// Background work: a few worker threads. Tasks of one key (a space) run one after another,
// in the order they were submitted; different keys proceed in parallel.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
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

  void submit(std::string key, std::function<void()> task);
  // Blocks until every submitted task has finished (tests, shutdown).
  void drain();

 private:
  void work();

  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  // Each key's waiting tasks; a key is in ready_ while it has tasks and no worker runs one
  // of them, which is what keeps a key's tasks in order.
  std::map<std::string, std::deque<std::function<void()>>> pending_;
  std::deque<std::string> ready_;
  std::size_t queued_ = 0;
  unsigned busy_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace bowline::engine
