#include "ssh/banner.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace bowline::ssh {

namespace {

// The identification line at the start of `line`, if it is one (a line of at most 255
// characters with its CR LF, RFC 4253 4.2: the rest of a longer one is not kept).
std::optional<std::string> identification(std::string line) {
  if (line.rfind("SSH-", 0) != 0) return std::nullopt;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.size() > 253) line.resize(253);
  return line;
}

}  // namespace

std::optional<std::string> read_identification(int fd, std::chrono::milliseconds timeout) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + timeout;
  std::string pending;  // the line read so far
  std::size_t seen = 0;
  char buffer[1024];
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) break;
    const auto got = ::read(fd, buffer, sizeof buffer);
    if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (got <= 0) break;  // the peer closed, or the connection failed
    for (ssize_t i = 0; i < got; ++i) {
      if (buffer[i] != '\n') {
        // Only the start of a line tells; a long other line is not kept whole.
        if (pending.size() < 256) pending += buffer[i];
        continue;
      }
      if (auto line = identification(pending)) return line;
      pending.clear();
    }
    seen += static_cast<std::size_t>(got);
    if (seen > kMaxBeforeBanner) return std::nullopt;
  }
  // A server that sent its line without the line end before we gave up still sent it.
  return identification(pending);
}

}  // namespace bowline::ssh
