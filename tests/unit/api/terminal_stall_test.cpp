// A browser terminal whose guest shell stopped reading: the thread that closes its socket
// (an HTTP worker) returns at once, and the pump lets go of the SSH connection.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "../common/fake_sshd.hpp"
#include "api/terminal_bridge.hpp"
#include "ssh/shell.hpp"
#include "util/tcp_connect.hpp"

namespace bowline::api {
namespace {

using namespace std::chrono_literals;

// The client's side: takes every frame, never pushes back.
class QuietPeer final : public SocketPeer {
 public:
  bool send(std::string bytes) override {
    received += bytes.size();
    return !closed_;
  }
  void close() override { closed_ = true; }
  bool closed() const override { return closed_; }
  std::size_t pending() const override { return 0; }
  std::atomic<std::size_t> received{0};

 private:
  std::atomic<bool> closed_{false};
};

TEST(security_terminal, ClosingATerminalWhoseShellStoppedReadingNeverWaitsForIt) {
  const auto host_key = testing::make_ssh_key();
  const auto client_key = testing::make_ssh_key();
  testing::FakeSshd guest("127.0.0.1", 0, host_key.private_key, testing::SshdMode::Stall);
  ssh::ShellOptions options;
  options.user = "al";
  options.private_key = client_key.private_key;
  options.host_key_public = host_key.public_line;
  auto shell = ssh::open_shell(util::tcp_connect("127.0.0.1", guest.port(), 5s), options);
  auto response = terminal_upgrade(
      std::move(shell), {}, [](std::shared_ptr<SocketPeer>) { return std::uint64_t{1}; },
      [](std::uint64_t) {});
  ASSERT_TRUE(response.upgrade);
  auto peer = std::make_shared<QuietPeer>();
  response.upgrade->open(peer);
  // 512 KiB typed: far more than the guest's window, less than the input limit.
  const std::string typed = std::string(1, kTerminalInput) + std::string(16 * 1024, 'y');
  for (int i = 0; i < 32; ++i) response.upgrade->message(typed);
  std::this_thread::sleep_for(500ms);  // the pump has filled the window by now
  ASSERT_EQ(guest.connections(), 1);

  auto closing = std::async(std::launch::async, [&] {
    const auto start = std::chrono::steady_clock::now();
    response.upgrade->close();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  ASSERT_EQ(closing.wait_for(10s), std::future_status::ready)
      << "close() waits for a pump stuck on the guest";
  EXPECT_LT(closing.get(), 1.0);
  // The pump cut the connection: the guest sees its client go.
  const auto until = std::chrono::steady_clock::now() + 5s;
  // ... and, on the pump's own thread, the browser's socket is closed.
  while ((guest.connections() > 0 || !peer->closed()) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(guest.connections(), 0);
  EXPECT_TRUE(peer->closed());
}

}  // namespace
}  // namespace bowline::api
