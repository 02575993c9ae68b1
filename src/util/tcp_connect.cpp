#include "util/tcp_connect.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/upstream_error.hpp"

namespace bowline::util {

namespace {

[[noreturn]] void fail(const std::string& where, int code, const std::string& why) {
  throw ConnectError("cannot connect to " + where + ": " + why, code);
}

[[noreturn]] void fail(const std::string& where, int code) {
  fail(where, code, std::strerror(code));
}

}  // namespace

bool ConnectError::refused() const noexcept {
  return code_ == ECONNREFUSED;
}

bool ConnectError::timed_out() const noexcept {
  return code_ == ETIMEDOUT;
}

int tcp_connect(const std::string& address, std::uint16_t port, std::chrono::milliseconds timeout) {
  const auto where = (address.find(':') != std::string::npos ? "[" + address + "]" : address) +
                     ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &found);
      rc != 0)
    fail(where, 0, ::gai_strerror(rc));
  const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    const int error = errno;
    ::freeaddrinfo(found);
    fail(where, error);
  }
  int rc = ::connect(fd, found->ai_addr, found->ai_addrlen);
  ::freeaddrinfo(found);
  if (rc != 0 && errno != EINPROGRESS) {
    const int error = errno;
    ::close(fd);
    fail(where, error);
  }
  if (rc != 0) {
    pollfd p{fd, POLLOUT, 0};
    do rc = ::poll(&p, 1, static_cast<int>(timeout.count()));
    while (rc < 0 && errno == EINTR);
    if (rc == 0) {
      ::close(fd);
      fail(where, ETIMEDOUT, "no answer within " + std::to_string(timeout.count()) + " ms");
    }
    int error = 0;
    if (rc < 0) {
      error = errno;
    } else {
      socklen_t length = sizeof error;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    }
    if (error != 0) {
      ::close(fd);
      fail(where, error);
    }
  }
  // Interactive traffic (SSH keystrokes) must not wait for Nagle.
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace bowline::util
