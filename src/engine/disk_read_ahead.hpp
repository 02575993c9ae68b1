// Reads a disk's data clusters ahead of the one who writes them out (an export): threads ask
// the disk for the next runs while the caller hashes and sends the previous ones, so the
// costs overlap instead of adding up. At most `depth` runs wait in memory (bounded, whatever
// the sink's speed), plus one being read per reader.
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
  // `max_run` bytes. One reader thread per disk in `disks` (views of the same disk, each used
  // by its thread only), which start at once; runs are still handed out in order.
  // `on_read`, when given, sees each run right after it is read, in order, on the thread that
  // read it (to hash it while it is in that CPU's cache).
  using OnRead = std::function<void(const char*, std::size_t)>;
  DiskReadAhead(const std::vector<image::GuestReader*>& disks,
                const std::vector<std::uint64_t>& clusters, std::uint64_t cluster,
                std::uint64_t max_run, std::size_t depth = 4, OnRead on_read = {});
  DiskReadAhead(image::GuestReader& disk, const std::vector<std::uint64_t>& clusters,
                std::uint64_t cluster, std::uint64_t max_run, std::size_t depth = 4,
                OnRead on_read = {})
      : DiskReadAhead(std::vector<image::GuestReader*>{&disk}, clusters, cluster, max_run, depth,
                      std::move(on_read)) {}
  ~DiskReadAhead();  // stops the readers (a caller that stops early) and waits for them
  DiskReadAhead(const DiskReadAhead&) = delete;
  DiskReadAhead& operator=(const DiskReadAhead&) = delete;

  // The next run in order; nullopt after the last. Rethrows a reader's error.
  std::optional<Run> next();

 private:
  void read_with(image::GuestReader& disk);

  struct Span {
    std::uint64_t first, count;  // clusters
  };
  std::vector<Span> spans_;  // every run, in order
  const std::uint64_t cluster_;
  const std::size_t depth_;
  OnRead on_read_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::size_t, Run> ready_;  // read, by index, not yet handed out
  std::size_t claimed_ = 0;           // runs given to a reader
  std::size_t seen_ = 0;              // runs on_read has seen
  std::size_t delivered_ = 0;         // runs handed out by next()
  std::size_t finished_ = 0;          // readers that are done
  bool stop_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> readers_;
};

}  // namespace bowline::engine
