// A large file written once from front to back past the page cache (O_DIRECT), for archives
// that are not read again soon: an export of a 20 GiB disk should not evict the host's page
// cache, and on hosts whose fresh page-cache pages are costly to fault in (nested guests), a
// buffered write of a new file spends seconds per GiB in the kernel. Where the file system
// refuses O_DIRECT (tmpfs), it writes through the page cache as usual.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace bowline::util {

class DirectFileWriter {
 public:
  // Creates or truncates `file` with `mode`; throws std::system_error naming the file.
  DirectFileWriter(const std::string& file, mode_t mode, std::size_t buffer = 4 << 20);
  ~DirectFileWriter();  // closes (without a sync) when finish() was not reached
  DirectFileWriter(const DirectFileWriter&) = delete;
  DirectFileWriter& operator=(const DirectFileWriter&) = delete;

  void write(std::string_view bytes);  // throws std::system_error
  // The rest, then fsync and close: the file is on disk when this returns.
  void finish();
  bool direct() const { return direct_; }
  std::uint64_t written() const { return written_; }

 private:
  void flush(std::size_t bytes);  // the first `bytes` of the buffer
  void go_buffered();
  [[noreturn]] void fail(const char* what) const;

  struct Free {
    void operator()(char* p) const;
  };
  std::string file_;
  int fd_ = -1;
  bool direct_ = false;
  std::unique_ptr<char, Free> buffer_;
  std::size_t capacity_, used_ = 0;
  std::uint64_t written_ = 0;
};

}  // namespace bowline::util
