// A large file written once from front to back past the page cache (O_DIRECT), for archives
// that are not read again soon: an export of a 20 GiB disk should not evict the host's page
// cache, and on hosts whose fresh page-cache pages are costly to fault in (nested guests), a
// buffered write of a new file spends seconds per GiB in the kernel. Where the file system
// refuses O_DIRECT (tmpfs), it writes through the page cache as usual.
//
// The disk writes happen on a thread of their own, a few buffers behind write(): a direct
// write blocks until the device has the data, and the one who fills the buffers (the CLI
// receiving an export) should not wait for that.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace bowline::util {

class DirectFileWriter {
 public:
  // Creates or truncates `file` with `mode`; throws std::system_error naming the file.
  // `buffers` of `buffer` bytes each: one being filled, the others written or waiting.
  DirectFileWriter(const std::string& file, mode_t mode, std::size_t buffer = 4 << 20,
                   std::size_t buffers = 3);
  ~DirectFileWriter();  // drops what is not written and closes (no sync) without finish()
  DirectFileWriter(const DirectFileWriter&) = delete;
  DirectFileWriter& operator=(const DirectFileWriter&) = delete;

  // Throws std::system_error: this write's, or one the thread met since the last call.
  void write(std::string_view bytes);
  // The rest, then close. With `sync`, fsync first: the file and the device's write cache
  // are on disk when this returns (on a virtual disk that can take as long as a third of the
  // writes). Without, it is where cp or qemu-img convert leave theirs: the data went past the
  // page cache to the device, the file's metadata is the kernel's to write.
  void finish(bool sync);
  std::uint64_t written() const { return written_; }

 private:
  struct Free {
    void operator()(char* p) const;
  };
  struct Job {
    std::size_t buffer, bytes;
  };

  void submit(std::size_t bytes);  // the buffer being filled, its first `bytes`
  void rethrow();                  // the thread's error, if any (mutex held)
  void write_out();                // the thread
  void flush(char* data, std::size_t bytes);
  void go_buffered();
  [[noreturn]] void fail(const char* what) const;

  std::string file_;
  int fd_ = -1;
  bool direct_ = false;  // the thread's (and the constructor's, before it starts)
  std::size_t capacity_;
  std::vector<std::unique_ptr<char, Free>> buffers_;
  std::size_t filling_ = 0, used_ = 0;  // the buffer write() fills, and its bytes
  std::uint64_t written_ = 0;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> jobs_;            // to write, in order
  std::vector<std::size_t> spare_;  // buffers free to fill
  bool busy_ = false;               // the thread is writing a job it took
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace bowline::util
