// Reads a disk's data ahead of the one who writes it out (an export): threads fill the next
// runs while the caller hashes and sends the previous ones, so the costs overlap instead of
// adding up. At most `depth` runs wait in memory (bounded, whatever the sink's speed), plus
// one being read per reader.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace bowline::engine {

class DiskReadAhead {
 public:
  struct Run {
    std::vector<char> bytes;
  };

  // Fills run `run` (`size` bytes at `out`, every byte) on reader thread `reader`.
  using Fill = std::function<void(std::size_t reader, std::size_t run, char* out, std::size_t)>;
  // `on_read`, when given, sees each run right after it is filled, in order, on the thread
  // that filled it (to hash it while it is in that CPU's cache).
  using OnRead = std::function<void(const char*, std::size_t)>;

  // Runs of `run_sizes` bytes, filled by `readers` threads at once (they start at once); runs
  // are still handed out in order.
  DiskReadAhead(std::size_t readers, std::vector<std::uint64_t> run_sizes, Fill fill,
                std::size_t depth = 4, OnRead on_read = {});

  ~DiskReadAhead();  // stops the readers (a caller that stops early) and waits for them
  DiskReadAhead(const DiskReadAhead&) = delete;
  DiskReadAhead& operator=(const DiskReadAhead&) = delete;

  // The next run in order; nullopt after the last. Rethrows a reader's error.
  std::optional<Run> next();
  // Hands a run's memory back for a later run. Optional, and why it is worth doing: a fresh
  // 4 MiB buffer per run meant a page fault per page and zeroing it, a sixth of an export's
  // CPU on a host whose fresh pages are costly (nested guests).
  void recycle(Run&& run);

 private:
  void read_with(std::size_t reader);

  std::vector<std::uint64_t> sizes_;  // every run's, in order
  Fill fill_;
  const std::size_t depth_;
  OnRead on_read_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::size_t, Run> ready_;      // read, by index, not yet handed out
  std::vector<std::vector<char>> spare_;  // recycled buffers
  std::size_t claimed_ = 0;               // runs given to a reader
  std::size_t seen_ = 0;                  // runs on_read has seen
  std::size_t delivered_ = 0;             // runs handed out by next()
  std::size_t finished_ = 0;              // readers that are done
  bool stop_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> readers_;
};

}  // namespace bowline::engine
