// Port 22 is "open" only when an sshd answers: a loopback listener that takes the connection
// and says nothing (as a proxy or a firewall that accepts every connect does), one that sends
// an SSH identification line (after other lines, as RFC 4253 allows), one that answers like a
// web server, and a closed port; util::tcp_connect's failures carry their errno.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "engine/sshd_probe.hpp"
#include "ssh/banner.hpp"
#include "util/tcp_connect.hpp"

namespace bowline::engine {
namespace {

using namespace std::chrono_literals;

// A listener on 127.0.0.1 that accepts every connection, writes `says` to it and keeps it
// open (or closes it after writing, `hang_up`) until the listener goes.
class Listener {
 public:
  explicit Listener(std::string says = "", bool hang_up = false)
      : says_(std::move(says)), hang_up_(hang_up) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t length = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &length);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~Listener() {
    stop_ = true;
    thread_.join();
    for (const int c : taken_) ::close(c);
    ::close(fd_);
  }
  std::uint16_t port() const { return port_; }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      if (!says_.empty()) {
        EXPECT_EQ(::send(c, says_.data(), says_.size(), MSG_NOSIGNAL),
                  static_cast<ssize_t>(says_.size()));
      }
      if (hang_up_)
        ::close(c);
      else
        taken_.push_back(c);
    }
  }

  std::string says_;
  bool hang_up_;
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<int> taken_;
  std::thread thread_;
};

// A loopback port nothing listens on: bound, then let go.
std::uint16_t closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t length = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string state_of(std::uint16_t port, std::chrono::milliseconds wait = 2s) {
  return sshd_state([port] { return util::tcp_connect("127.0.0.1", port, 500ms); }, wait);
}

TEST(ssh_banner_check, AnSshdThatSendsItsIdentificationLineIsOpen) {
  Listener sshd("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n");
  EXPECT_EQ(state_of(sshd.port()), "open");
}

TEST(ssh_banner_check, LinesBeforeTheIdentificationLineAreSkipped) {
  Listener sshd("Welcome to the jump host\r\nauthorized use only\r\nSSH-2.0-dropbear_2022.83\r\n");
  EXPECT_EQ(state_of(sshd.port()), "open");
}

TEST(ssh_banner_check, AListenerThatAcceptsAndSaysNothingIsNoBannerWithinTheWait) {
  Listener silent;
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(state_of(silent.port(), 300ms), "no banner");
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_GE(took, 250ms);
  EXPECT_LT(took, 2s) << "the wait for the banner is bounded";
}

TEST(ssh_banner_check, SomethingElseThatAnswersIsNoBanner) {
  Listener web("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", true);
  EXPECT_EQ(state_of(web.port()), "no banner");
  // "SSH-" further on in a line is not the identification line.
  Listener echo("hello SSH-2.0-not-at-the-start\r\n", true);
  EXPECT_EQ(state_of(echo.port()), "no banner");
}

TEST(ssh_banner_check, AClosedPortIsClosedByItsErrnoNotItsWords) {
  const auto port = closed_port();
  EXPECT_EQ(state_of(port), "closed");
  try {
    ::close(util::tcp_connect("127.0.0.1", port, 500ms));
    FAIL() << "connected to a closed port";
  } catch (const util::ConnectError& e) {
    EXPECT_EQ(e.code(), ECONNREFUSED);
    EXPECT_TRUE(e.refused());
    EXPECT_FALSE(e.timed_out());
    EXPECT_EQ(e.upstream(), "guest");
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(port)), std::string::npos)
        << e.what();
  }
}

// A listener whose queue of connections is full and that accepts none: Linux drops further
// SYNs, so a connect to it gets no answer (a deterministic timeout on loopback).
class FullListener {
 public:
  FullListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 0), 0);
    socklen_t length = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &length);
    port_ = ntohs(addr.sin_port);
    for (int i = 0; i < 3; ++i) {
      const int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      ::connect(c, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
      fillers_.push_back(c);
    }
    std::this_thread::sleep_for(100ms);
  }
  ~FullListener() {
    for (const int c : fillers_) ::close(c);
    ::close(fd_);
  }
  std::uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::vector<int> fillers_;
};

TEST(ssh_banner_check, AConnectThatGetsNoAnswerIsNoRoute) {
  FullListener full;
  try {
    ::close(util::tcp_connect("127.0.0.1", full.port(), 200ms));
    FAIL() << "connected to a listener whose queue is full";
  } catch (const util::ConnectError& e) {
    EXPECT_EQ(e.code(), ETIMEDOUT) << e.what();
    EXPECT_TRUE(e.timed_out());
    EXPECT_FALSE(e.refused());
  }
  EXPECT_EQ(state_of(full.port()), "no route");
}

TEST(ssh_banner_check, NotAnAddressIsNeitherRefusedNorTimedOut) {
  try {
    util::tcp_connect("not-an-address", 22, 200ms);
    FAIL() << "connected to no address";
  } catch (const util::ConnectError& e) {
    EXPECT_EQ(e.code(), 0);
    EXPECT_FALSE(e.refused());
    EXPECT_FALSE(e.timed_out());
  }
  EXPECT_EQ(sshd_state([] { return util::tcp_connect("not-an-address", 22, 200ms); }), "no route");
}

TEST(ssh_banner_check, ErrorsOtherThanAFailedConnectAreTheCallers) {
  EXPECT_THROW(sshd_state([]() -> int { throw std::runtime_error("no address yet"); }),
               std::runtime_error);
}

// The reader on its own: a socketpair stands for the connection.
class Identification : public ::testing::Test {
 protected:
  Identification() { ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds_); }
  ~Identification() override {
    ::close(fds_[0]);
    if (fds_[1] >= 0) ::close(fds_[1]);
  }
  void send(const std::string& bytes) {
    ASSERT_EQ(::send(fds_[1], bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  void hang_up() {
    ::close(fds_[1]);
    fds_[1] = -1;
  }
  std::optional<std::string> read(std::chrono::milliseconds wait = 300ms) {
    return ssh::read_identification(fds_[0], wait);
  }
  int fds_[2] = {-1, -1};
};

using ssh_banner_check_reader = Identification;

TEST_F(ssh_banner_check_reader, ReturnsTheLineWithoutItsLineEnd) {
  send("SSH-2.0-OpenSSH_9.6\r\n");
  EXPECT_EQ(read(), "SSH-2.0-OpenSSH_9.6");
}

TEST_F(ssh_banner_check_reader, ALineThatCameInPiecesAndOnlyLfEnds) {
  std::thread writer([this] {
    send("banner line one\nSS");
    std::this_thread::sleep_for(50ms);
    send("H-1.99-old\n");
  });
  EXPECT_EQ(read(), "SSH-1.99-old");
  writer.join();
}

TEST_F(ssh_banner_check_reader, NothingOrAHangUpIsNone) {
  EXPECT_EQ(read(100ms), std::nullopt);
  send("220 smtp.example ESMTP\r\n");
  hang_up();
  EXPECT_EQ(read(), std::nullopt);
}

TEST_F(ssh_banner_check_reader, EndlessOtherLinesEndTheReadEarly) {
  const std::string junk(1000, 'x');
  std::thread writer([this, &junk] {
    for (int i = 0; i < 40; ++i)
      if (::send(fds_[1], (junk + "\r\n").data(), junk.size() + 2, MSG_NOSIGNAL) < 0) break;
  });
  const auto started = std::chrono::steady_clock::now();
  EXPECT_EQ(read(5s), std::nullopt);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 4s);
  writer.join();
}

}  // namespace
}  // namespace bowline::engine
