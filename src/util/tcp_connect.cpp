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

[[noreturn]] void fail(const std::string& where, const std::string& why) {
  throw UpstreamError("guest", "cannot connect to " + where + ": " + why);
}

}  // namespace

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
    fail(where, ::gai_strerror(rc));
  const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    ::freeaddrinfo(found);
    fail(where, std::strerror(errno));
  }
  int rc = ::connect(fd, found->ai_addr, found->ai_addrlen);
  ::freeaddrinfo(found);
  if (rc != 0 && errno != EINPROGRESS) {
    const int error = errno;
    ::close(fd);
    fail(where, std::strerror(error));
  }
  if (rc != 0) {
    pollfd p{fd, POLLOUT, 0};
    do rc = ::poll(&p, 1, static_cast<int>(timeout.count()));
    while (rc < 0 && errno == EINTR);
    if (rc == 0) {
      ::close(fd);
      fail(where, "no answer within " + std::to_string(timeout.count()) + " ms");
    }
    int error = 0;
    socklen_t length = sizeof error;
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    if (rc < 0 || error != 0) {
      ::close(fd);
      fail(where, std::strerror(rc < 0 ? errno : error));
    }
  }
  // Interactive traffic (SSH keystrokes) must not wait for Nagle.
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace bowline::util
