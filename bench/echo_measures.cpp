#include "echo_measures.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace bowline::bench {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto at = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(at, v.size() - 1)];
}

TcpEcho::TcpEcho() {
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof a;
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&a), n) != 0 || ::listen(listener_, 16) != 0 ||
      ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &n) != 0)
    throw std::runtime_error("echo: cannot listen");
  port_ = ntohs(a.sin_port);
  acceptor_ = std::thread([this] {
    for (;;) {
      const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      std::lock_guard lock(mutex_);
      echoes_.emplace_back([fd] {
        std::vector<char> buffer(256 * 1024);
        for (;;) {
          const auto got = ::recv(fd, buffer.data(), buffer.size(), 0);
          if (got <= 0) break;
          for (ssize_t at = 0; at < got;) {
            const auto sent = ::send(fd, buffer.data() + at, got - at, MSG_NOSIGNAL);
            if (sent <= 0) break;
            at += sent;
          }
        }
        ::close(fd);
      });
    }
  });
}

TcpEcho::~TcpEcho() {
  ::shutdown(listener_, SHUT_RDWR);
  ::close(listener_);
  acceptor_.join();
  std::lock_guard lock(mutex_);
  for (auto& t : echoes_) t.join();
}

// Bytes/s of `total` bytes written in `chunk`-sized writes while a second thread reads the echo.
double echo_throughput(BytePipe& pipe, std::size_t total, std::size_t chunk) {
  const std::string block(chunk, 'x');
  const auto t0 = Clock::now();
  std::string failed;
  std::thread reader([&] {
    try {
      pipe.skip(total, 60s);
    } catch (const std::exception& e) {
      failed = std::string("reading the echo: ") + e.what();
    }
  });
  try {
    for (std::size_t sent = 0; sent < total; sent += chunk) pipe.write_all(block);
  } catch (const std::exception& e) {
    reader.join();
    throw std::runtime_error(std::string("writing: ") + e.what() +
                             (failed.empty() ? "" : "; " + failed));
  }
  reader.join();
  if (!failed.empty()) throw std::runtime_error(failed);
  return static_cast<double>(total) / std::chrono::duration<double>(Clock::now() - t0).count();
}

double round_trip(BytePipe& pipe, char byte) {
  const auto t0 = Clock::now();
  pipe.write_all(std::string_view(&byte, 1));
  char got = 0;
  pipe.read_exact(&got, 1, 10s);
  const auto t1 = Clock::now();
  if (got != byte) throw std::runtime_error("the echo sent back another byte");
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

}  // namespace bowline::bench
