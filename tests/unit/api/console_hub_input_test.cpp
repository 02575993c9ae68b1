// Keystrokes on their way into a console through the ConsoleHub: sent at once from the
// caller's thread (the WebSocket's I/O thread) while nobody else is writing, what the stream
// does not take at once through the hub's writer thread, and never out of order.
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "api/console_hub.hpp"
#include "unused_hypervisor.hpp"

namespace bowline::api::testing {
namespace {

using namespace std::chrono_literals;

bool eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

// The guest's side of the console: what arrived, and how.
struct Typed {
  std::mutex mutex;
  std::condition_variable changed;
  std::string bytes;
  std::size_t take_now = 1024;  // bytes write_now() accepts per call
  std::vector<std::thread::id> now_threads;
  int writes = 0;  // write() calls (the writer thread's)
  bool closed = false;
  bool stalled = false;  // a guest that does not read: write() waits

  std::string text() {
    std::lock_guard lock(mutex);
    return bytes;
  }
};

class TypedStream final : public util::ByteStream {
 public:
  explicit TypedStream(std::shared_ptr<Typed> typed) : typed_(std::move(typed)) {}
  std::string read(std::chrono::milliseconds timeout, std::size_t) override {
    std::unique_lock lock(typed_->mutex);
    typed_->changed.wait_for(lock, timeout, [&] { return typed_->closed; });
    return {};
  }
  void write(std::string_view data) override {
    std::unique_lock lock(typed_->mutex);
    typed_->changed.wait(lock, [&] { return !typed_->stalled || typed_->closed; });
    typed_->bytes += data;
    ++typed_->writes;
  }
  std::size_t write_now(std::string_view data) override {
    std::lock_guard lock(typed_->mutex);
    const auto n = std::min(data.size(), typed_->take_now);
    typed_->bytes += data.substr(0, n);
    typed_->now_threads.push_back(std::this_thread::get_id());
    return n;
  }
  bool eof() const override {
    std::lock_guard lock(typed_->mutex);
    return typed_->closed;
  }
  void close() override {
    std::lock_guard lock(typed_->mutex);
    typed_->closed = true;
    typed_->changed.notify_all();
  }

 private:
  std::shared_ptr<Typed> typed_;
};

class TypedHost final : public UnusedHypervisor {
 public:
  std::shared_ptr<Typed> typed = std::make_shared<Typed>();

  std::unique_ptr<util::ByteStream> open_console(const std::string&, const std::string&,
                                                 bool) override {
    return std::make_unique<TypedStream>(typed);
  }
};

class Quiet final : public SocketPeer {
 public:
  bool send(std::string) override { return true; }
  void close() override {}
  bool closed() const override { return false; }
  std::size_t pending() const override { return 0; }
};

TEST(ConsoleHubInput, WithNobodyWritingAKeystrokeGoesOutOnTheCallersThread) {
  TypedHost host;
  ConsoleHub hub(console_of(host), 1024);
  hub.attach("dom", std::make_shared<Quiet>());
  ASSERT_TRUE(eventually([&] { return hub.opens("dom") == 1; }));

  hub.input("dom", "r");
  hub.input("dom", "oot\r");
  std::lock_guard lock(host.typed->mutex);
  EXPECT_EQ(host.typed->bytes, "root\r");
  EXPECT_EQ(host.typed->writes, 0) << "no hand-over to the writer thread";
  ASSERT_EQ(host.typed->now_threads.size(), 2u);
  EXPECT_EQ(host.typed->now_threads[0], std::this_thread::get_id());
  EXPECT_EQ(host.typed->now_threads[1], std::this_thread::get_id());
}

TEST(ConsoleHubInput, WhatTheStreamDoesNotTakeAtOnceFollowsInOrder) {
  TypedHost host;
  host.typed->take_now = 1;
  ConsoleHub hub(console_of(host), 1024);
  hub.attach("dom", std::make_shared<Quiet>());
  ASSERT_TRUE(eventually([&] { return hub.opens("dom") == 1; }));

  std::string expected;
  for (int i = 0; i < 200; ++i) {
    const auto word = "w" + std::to_string(i) + " ";
    hub.input("dom", word);
    expected += word;
  }
  EXPECT_TRUE(eventually([&] { return host.typed->text() == expected; })) << host.typed->text();
  std::lock_guard lock(host.typed->mutex);
  EXPECT_GT(host.typed->writes, 0) << "the rest went through the writer thread";
}

// A guest that reads nothing while a client types on: the hub holds at most its input limit and
// then refuses (the route drops that viewer), so a flood cannot grow the server's memory. What
// it accepted still reaches the guest, in order, once the guest reads again.
TEST(security_console, AFloodIsRefusedAtTheInputLimitAndWhatWasTakenArrivesInOrder) {
  TypedHost host;
  host.typed->take_now = 0;
  host.typed->stalled = true;
  constexpr std::size_t kLimit = 64 * 1024;
  ConsoleHub hub(console_of(host), 1024, std::chrono::minutes(10), util::steady_timer(), kLimit);
  hub.attach("dom", std::make_shared<Quiet>());
  ASSERT_TRUE(eventually([&] { return hub.opens("dom") == 1; }));

  std::string accepted;
  const std::string chunk(4096, 'k');
  int refused = 0;
  for (int i = 0; i < 1000 && refused == 0; ++i) {
    const auto bytes = std::to_string(i % 10) + chunk;
    if (hub.input("dom", bytes))
      accepted += bytes;
    else
      ++refused;
  }
  EXPECT_EQ(refused, 1);
  // The writer holds one chunk; the queue holds up to the limit.
  EXPECT_LE(accepted.size(), kLimit + chunk.size() + 1);
  EXPECT_GE(accepted.size(), kLimit - chunk.size());
  {
    std::lock_guard lock(host.typed->mutex);
    host.typed->stalled = false;
    host.typed->changed.notify_all();
  }
  EXPECT_TRUE(eventually([&] { return host.typed->text() == accepted; }))
      << host.typed->text().size() << " of " << accepted.size();
  EXPECT_TRUE(hub.input("dom", "more"));  // room again
}

}  // namespace
}  // namespace bowline::api::testing
