#include "util/direct_file_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace bowline::util {

namespace {

// O_DIRECT wants the buffer, the file offset and the length aligned to the device's logical
// block; 4096 covers every block size in use.
constexpr std::size_t kAlign = 4096;

}  // namespace

void DirectFileWriter::Free::operator()(char* p) const {
  std::free(p);
}

DirectFileWriter::DirectFileWriter(const std::string& file, mode_t mode, std::size_t buffer)
    : file_(file), capacity_(std::max(kAlign, buffer / kAlign * kAlign)) {
  void* memory = nullptr;
  if (::posix_memalign(&memory, kAlign, capacity_) != 0)
    throw std::system_error(ENOMEM, std::generic_category(), "cannot write " + file_);
  buffer_.reset(static_cast<char*>(memory));
  fd_ = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, mode);
  direct_ = fd_ >= 0;
  if (fd_ < 0 && errno == EINVAL)  // the file system has no O_DIRECT
    fd_ = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd_ < 0) fail("cannot write");
  ::fchmod(fd_, mode);  // an existing file keeps its mode through O_CREAT
}

DirectFileWriter::~DirectFileWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void DirectFileWriter::fail(const char* what) const {
  throw std::system_error(errno, std::generic_category(), std::string(what) + " " + file_);
}

void DirectFileWriter::go_buffered() {
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT) < 0) fail("cannot write");
  direct_ = false;
}

void DirectFileWriter::flush(std::size_t bytes) {
  // Only whole blocks go out direct; a tail that is not (the end of the file) goes buffered.
  if (direct_ && bytes % kAlign != 0) go_buffered();
  for (std::size_t at = 0; at < bytes;) {
    const auto n = ::write(fd_, buffer_.get() + at, bytes - at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EINVAL && direct_) {  // refused late (some FUSE and network mounts)
      go_buffered();
      continue;
    }
    if (n <= 0) fail("cannot write");
    at += static_cast<std::size_t>(n);
    // A short direct write leaves the rest unaligned: finish this buffer through the cache.
    if (at < bytes && direct_ && at % kAlign != 0) go_buffered();
  }
  written_ += bytes;
}

void DirectFileWriter::write(std::string_view bytes) {
  while (!bytes.empty()) {
    const auto n = std::min(bytes.size(), capacity_ - used_);
    std::memcpy(buffer_.get() + used_, bytes.data(), n);
    used_ += n;
    bytes.remove_prefix(n);
    if (used_ == capacity_) {
      flush(used_);
      used_ = 0;
    }
  }
}

void DirectFileWriter::finish() {
  const auto whole = used_ / kAlign * kAlign;
  if (whole) flush(whole);
  if (used_ > whole) {
    std::memmove(buffer_.get(), buffer_.get() + whole, used_ - whole);
    flush(used_ - whole);
  }
  used_ = 0;
  if (::fsync(fd_) != 0) fail("cannot write");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("cannot write");
}

}  // namespace bowline::util
