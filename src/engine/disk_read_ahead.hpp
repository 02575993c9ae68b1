// Reads a disk's data clusters ahead of the one who writes them out (an export): a thread asks
// the disk for the next runs while the caller hashes and sends the previous ones, so the two
// costs overlap instead of adding up. At most `depth` runs wait in memory (bounded, whatever
// the sink's speed).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "image/guest_reader.hpp"

namespace bowline::engine {

class DiskReadAhead {
 public:
  // One run of consecutive clusters: `bytes` are the run's whole clusters (the last one
  // zero-padded past the disk's end).
  struct Run {
    std::vector<char> bytes;
  };

  // `clusters`: the data clusters' numbers, ascending; `cluster` bytes each; runs of at most
  // `max_run` bytes. The reader starts at once.
  // `on_read`, when given, sees each run on the reader thread right after it is read, in
  // order (to hash it while it is in the CPU's cache).
  using OnRead = std::function<void(const char*, std::size_t)>;
  DiskReadAhead(image::GuestReader& disk, const std::vector<std::uint64_t>& clusters,
                std::uint64_t cluster, std::uint64_t max_run, std::size_t depth = 4,
                OnRead on_read = {});
  ~DiskReadAhead();  // stops the reader (a caller that stops early) and waits for it
  DiskReadAhead(const DiskReadAhead&) = delete;
  DiskReadAhead& operator=(const DiskReadAhead&) = delete;

  // The next run in order; nullopt after the last. Rethrows the reader's error.
  std::optional<Run> next();

 private:
  void read_all();

  image::GuestReader& disk_;
  const std::vector<std::uint64_t>& clusters_;
  const std::uint64_t cluster_, max_run_;
  const std::size_t depth_;
  OnRead on_read_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Run> ready_;
  bool done_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread reader_;
};

}  // namespace bowline::engine
