// The browser terminal's SSH client against a stand-in sshd: what it writes never waits for a
// guest that stopped reading, and abort() frees its thread at once.
#include "ssh/shell.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "../common/fake_sshd.hpp"
#include "util/tcp_connect.hpp"

namespace bowline::ssh {
namespace {

using namespace std::chrono_literals;
using testing::FakeSshd;
using testing::SshdMode;

struct Guest {
  explicit Guest(SshdMode mode)
      : host_key(testing::make_ssh_key()),
        client_key(testing::make_ssh_key()),
        sshd("127.0.0.1", 0, host_key.private_key, mode) {}

  std::unique_ptr<util::TerminalStream> open() {
    ShellOptions options;
    options.user = "al";
    options.private_key = client_key.private_key;
    options.host_key_public = host_key.public_line;
    options.timeout = 5s;
    return open_shell(util::tcp_connect("127.0.0.1", sshd.port(), 5s), options);
  }

  testing::SshKeyPair host_key, client_key;
  FakeSshd sshd;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(security_terminal_shell, WritesToAGuestThatStoppedReadingTakeTheWindowAndNeverWait) {
  Guest guest(SshdMode::Stall);
  auto shell = guest.open();
  const std::string chunk(64 * 1024, 'y');
  std::size_t taken = 0;
  double slowest = 0;
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (std::chrono::steady_clock::now() < until) {
    const auto start = std::chrono::steady_clock::now();
    taken += shell->write_now(chunk);
    slowest = std::max(slowest, seconds_since(start));
    shell->read(20ms);
  }
  // The stand-in gives a window of 64,000 bytes and never more: that much, then nothing.
  EXPECT_GT(taken, 0u);
  EXPECT_LE(taken, 64'000u);
  EXPECT_LT(slowest, 1.0) << "a write waited for the guest";
}

TEST(security_terminal_shell, AbortFromAnotherThreadEndsAWaitingReadAtOnce) {
  Guest guest(SshdMode::Stall);
  auto shell = guest.open();
  shell->write_now(std::string(100'000, 'y'));  // the window is full now
  std::promise<double> took;
  std::thread reader([&] {
    const auto start = std::chrono::steady_clock::now();
    try {
      for (int i = 0; i < 40 && !shell->eof(); ++i) shell->read(250ms);
    } catch (const ShellError&) {
    }
    took.set_value(seconds_since(start));
  });
  std::this_thread::sleep_for(100ms);
  shell->abort();
  auto result = took.get_future();
  ASSERT_EQ(result.wait_for(5s), std::future_status::ready) << "abort() did not end the read";
  EXPECT_LT(result.get(), 1.0);
  reader.join();
  EXPECT_THROW(shell->write_now("more"), ShellError);
}

TEST(terminal_shell, EverythingWrittenArrivesThroughTheWindowAndComesBack) {
  Guest guest(SshdMode::Echo);
  auto shell = guest.open();
  std::string sent;
  for (int i = 0; sent.size() < 300'000; ++i) sent += "line " + std::to_string(i) + "\n";
  // One thread, as the terminal's pump: what the window takes, then what came back.
  std::string got;
  std::size_t written = 0;
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (got.size() < sent.size() + 2 && std::chrono::steady_clock::now() < until) {
    written += shell->write_now(std::string_view(sent).substr(written));
    got += shell->read(20ms);
  }
  EXPECT_EQ(written, sent.size());
  EXPECT_EQ(got, "$ " + sent);
}

}  // namespace
}  // namespace bowline::ssh
