// Background work: worker threads. Tasks of one key (a space) run one after another, in the
// order they were submitted; different keys proceed in parallel.
//
// The pool is elastic: `threads` workers always, and when a key becomes ready while every
// worker is busy, another worker is started, up to `max_threads`. A space whose operation is
// stuck (a guest that does not answer, a slow disk) then holds one worker, never the others'
// turn: four stalled spaces cannot stop a fifth user's create. Extra workers stay once started
// (an idle thread costs a stack, and a burst that needed them is likely to come again).
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
  // max_threads below threads means threads (a fixed pool).
  explicit Executor(unsigned threads, unsigned max_threads = 0);
  ~Executor();  // finishes queued work, then joins
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  void submit(std::string key, std::function<void()> task);
  // Blocks until every submitted task has finished (tests, shutdown).
  void drain();
  // How many workers there are now (tests, the server's report).
  unsigned workers() const;

 private:
  void work();
  void spawn_locked();

  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  // Each key's waiting tasks; a key is in ready_ while it has tasks and no worker runs one
  // of them, which is what keeps a key's tasks in order.
  std::map<std::string, std::deque<std::function<void()>>> pending_;
  std::deque<std::string> ready_;
  std::size_t queued_ = 0;
  unsigned busy_ = 0;
  unsigned max_threads_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace bowline::engine
