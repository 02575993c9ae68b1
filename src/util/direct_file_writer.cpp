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

DirectFileWriter::DirectFileWriter(const std::string& file, mode_t mode, std::size_t buffer,
                                   std::size_t buffers)
    : file_(file), capacity_(std::max(kAlign, buffer / kAlign * kAlign)) {
  for (std::size_t i = 0; i < std::max<std::size_t>(buffers, 2); ++i) {
    void* memory = nullptr;
    if (::posix_memalign(&memory, kAlign, capacity_) != 0)
      throw std::system_error(ENOMEM, std::generic_category(), "cannot write " + file_);
    buffers_.emplace_back(static_cast<char*>(memory));
    if (i > 0) spare_.push_back(i);
  }
  fd_ = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, mode);
  direct_ = fd_ >= 0;
  if (fd_ < 0 && errno == EINVAL)  // the file system has no O_DIRECT
    fd_ = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd_ < 0) fail("cannot write");
  ::fchmod(fd_, mode);  // an existing file keeps its mode through O_CREAT
  thread_ = std::thread([this] { write_out(); });
}

DirectFileWriter::~DirectFileWriter() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    jobs_.clear();
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
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

void DirectFileWriter::flush(char* data, std::size_t bytes) {
  // Only whole blocks go out direct; a tail that is not (the end of the file) goes buffered.
  if (direct_ && bytes % kAlign != 0) go_buffered();
  for (std::size_t at = 0; at < bytes;) {
    const auto n = ::write(fd_, data + at, bytes - at);
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
}

void DirectFileWriter::write_out() {
  for (;;) {
    Job job{};
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = jobs_.front();
      jobs_.pop_front();
      busy_ = true;
    }
    std::exception_ptr error;
    try {
      char* data = buffers_[job.buffer].get();
      // The file's end: its whole blocks direct, then the rest through the cache.
      const auto whole = job.bytes / kAlign * kAlign;
      if (whole) flush(data, whole);
      if (job.bytes > whole) flush(data + whole, job.bytes - whole);
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard lock(mutex_);
      busy_ = false;
      spare_.push_back(job.buffer);
      if (error && !error_) error_ = error;
      if (error_) jobs_.clear();  // nothing after a failed write lands in the file
    }
    changed_.notify_all();
  }
}

void DirectFileWriter::rethrow() {
  if (error_) std::rethrow_exception(error_);
}

void DirectFileWriter::submit(std::size_t bytes) {
  std::unique_lock lock(mutex_);
  rethrow();
  jobs_.push_back({filling_, bytes});
  changed_.notify_all();
  changed_.wait(lock, [&] { return !spare_.empty() || error_; });
  rethrow();
  filling_ = spare_.back();
  spare_.pop_back();
}

void DirectFileWriter::write(std::string_view bytes) {
  while (!bytes.empty()) {
    const auto n = std::min(bytes.size(), capacity_ - used_);
    std::memcpy(buffers_[filling_].get() + used_, bytes.data(), n);
    used_ += n;
    bytes.remove_prefix(n);
    written_ += n;
    if (used_ == capacity_) {
      submit(used_);
      used_ = 0;
    }
  }
}

void DirectFileWriter::finish(bool sync) {
  if (used_) submit(used_);
  used_ = 0;
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return (jobs_.empty() && !busy_) || error_; });
    rethrow();
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
  // The buffered tail and the file's size reach the disk too.
  if (sync && ::fsync(fd_) != 0) fail("cannot write");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("cannot write");
}

}  // namespace bowline::util
