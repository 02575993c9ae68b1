// Fakes behind a space's sockets for the API tests (access_test.cpp, hostile_inputs_test.cpp):
// a display that greets like an RFB server, a guest TCP service and a shell that echo, and the
// engine::SpaceAccess that hands them to the API.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "api_test_support.hpp"
#include "engine/space_access.hpp"
#include "unused_hypervisor.hpp"
#include "util/tcp_connect.hpp"

namespace bowline::api::testing {

// The test driver for the engine; for the WebSockets a host whose display is a socketpair
// that greets like an RFB server and echoes what it gets, and whose console is the test
// driver's (which has none: the hub keeps trying, harmlessly).
class DisplayHost final : public UnusedHypervisor {
 public:
  std::unique_ptr<util::ByteStream> open_console(const std::string& name, const std::string&,
                                                 bool) override {
    throw libvirt::HypervisorError("domain \"" + name + "\": no console here");
  }
  int open_graphics(const std::string&, unsigned, bool skip_auth) override {
    EXPECT_TRUE(skip_auth);
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) throw unused();
    ++opened;
    servers_.emplace_back([fd = fds[1]] {
      try {
        send_all(fd, "RFB 003.008\n");
        for (;;) {
          bool eof = false;
          auto got = receive_some(fd, 30s, &eof);
          if (got.empty()) break;
          send_all(fd, "echo:" + got);
        }
      } catch (const std::exception&) {
        // The bridge closed its end: this viewer is done.
      }
      ::close(fd);
    });
    return fds[0];
  }
  ~DisplayHost() override {
    for (auto& t : servers_) t.join();
  }
  std::atomic<int> opened{0};

 private:
  std::vector<std::thread> servers_;
};

// A guest's TCP service on loopback: echoes what it gets; at the client's end (EOF) it says
// "eof-seen" and ends its side too, so a tunnel's half-close shows both ways.
class EchoService {
 public:
  EchoService() {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        ::listen(listener_, 64) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0)
      throw std::runtime_error("echo service: cannot listen");
    port_ = ntohs(address.sin_port);
    acceptor_ = std::thread([this] {
      for (;;) {
        const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) return;
        std::lock_guard lock(mutex_);
        connections_.emplace_back([fd] {
          char buffer[65536];
          for (;;) {
            const auto got = ::recv(fd, buffer, sizeof buffer, 0);
            if (got <= 0) break;
            try {
              send_all(fd, std::string(buffer, static_cast<std::size_t>(got)));
            } catch (const std::exception&) {
              break;
            }
          }
          try {
            send_all(fd, "eof-seen");
          } catch (const std::exception&) {
          }
          ::shutdown(fd, SHUT_WR);
          ::close(fd);
        });
      }
    });
  }
  ~EchoService() {
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    acceptor_.join();
    std::lock_guard lock(mutex_);
    for (auto& t : connections_) t.join();
  }
  unsigned short port() const { return port_; }

 private:
  int listener_ = -1;
  unsigned short port_ = 0;
  std::thread acceptor_;
  std::mutex mutex_;
  std::vector<std::thread> connections_;
};

// A shell that answers "echo:" and what it got, and "size:COLSxROWS" for each size it is given
// (the first one at open), so a test sees both directions and every resize.
class EchoTerminal final : public util::TerminalStream {
 public:
  EchoTerminal(unsigned cols, unsigned rows) { say("size:" + size(cols, rows)); }
  std::string read(std::chrono::milliseconds timeout, std::size_t max) override {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [&] { return !out_.empty() || closed_ || woken_; });
    woken_ = false;
    auto got = out_.substr(0, max);
    out_.erase(0, got.size());
    return got;
  }
  void write(std::string_view data) override { say("echo:" + std::string(data)); }
  std::size_t write_now(std::string_view data) override {
    write(data);
    return data.size();
  }
  bool eof() const override {
    std::lock_guard lock(mutex_);
    return closed_ && out_.empty();
  }
  void close() override {
    std::lock_guard lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }
  void resize(unsigned cols, unsigned rows) override { say("size:" + size(cols, rows)); }
  void interrupt() override {
    std::lock_guard lock(mutex_);
    woken_ = true;
    changed_.notify_all();
  }

 private:
  static std::string size(unsigned cols, unsigned rows) {
    return std::to_string(cols) + "x" + std::to_string(rows);
  }
  void say(const std::string& text) {
    std::lock_guard lock(mutex_);
    out_ += text;
    changed_.notify_all();
  }
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::string out_;
  bool closed_ = false, woken_ = false;
};

// The API's way to a space's console, display and ports, through the fakes above.
class HostAccess final : public engine::SpaceAccess {
 public:
  explicit HostAccess(DisplayHost& host) : host_(host) {}
  int open_port(const std::string&, std::uint16_t port) override {
    ports.push_back(port);
    if (port == 8000) throw std::runtime_error("cannot open /var/lib/bowline/secret.key");
    return util::tcp_connect("127.0.0.1", echo.port(), 5s);
  }
  std::vector<std::uint16_t> ports;  // asked for, in order
  EchoService echo;
  std::unique_ptr<util::ByteStream> open_console(const std::string& space_id) override {
    return host_.open_console(space_id, {}, true);
  }
  int open_display(const std::string& space_id) override {
    return host_.open_graphics(space_id, 0, true);
  }
  std::unique_ptr<util::TerminalStream> open_terminal(const std::string&, unsigned cols,
                                                      unsigned rows) override {
    ++terminals;
    return std::make_unique<EchoTerminal>(cols, rows);
  }
  std::atomic<int> terminals{0};

 private:
  DisplayHost& host_;
};

}  // namespace bowline::api::testing
