// The ConsoleHub against a fake console (through the Hypervisor seam, no libvirt): one stream
// fanned out to several viewers who all may type, bounded scrollback for newcomers, a viewer
// leaving without ending the stream for the others, a stream that ends (guest reboot, libvirtd
// dropping the connection) reopened under viewers who keep going, and the stream closed once
// the last viewer has left.
#include "api/console_hub.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

#include "unused_hypervisor.hpp"

namespace bowline::api::testing {
namespace {

using namespace std::chrono_literals;

// Conditions are polled against this generous bound so a loaded machine cannot fail a test
// that would pass given time; nothing asserts on how long anything took.
constexpr auto kPatience = 20s;

bool eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

// One opened console stream, as the guest's side sees it.
struct Line {
  std::mutex mutex;
  std::condition_variable changed;
  std::string to_host;  // printed by the guest, not yet read by the hub
  std::string typed;    // written by the hub
  bool ended = false;   // the guest side went away
  bool failed = false;  // ... with an error (libvirtd dropped the connection)
  bool closed = false;  // the hub closed it
};

class FakeStream final : public util::ByteStream {
 public:
  explicit FakeStream(std::shared_ptr<Line> line) : line_(std::move(line)) {}
  ~FakeStream() override { close(); }

  std::string read(std::chrono::milliseconds timeout, std::size_t max) override {
    std::unique_lock lock(line_->mutex);
    line_->changed.wait_for(
        lock, timeout, [&] { return !line_->to_host.empty() || line_->ended || line_->closed; });
    if (line_->to_host.empty()) {
      if (line_->failed && !line_->closed)
        throw libvirt::HypervisorError("fake console: the connection to libvirtd was dropped");
      return {};
    }
    auto out = line_->to_host.substr(0, max);
    line_->to_host.erase(0, out.size());
    line_->changed.notify_all();
    return out;
  }
  void write(std::string_view data) override {
    std::lock_guard lock(line_->mutex);
    if (line_->ended || line_->closed) throw libvirt::HypervisorError("fake console: closed");
    line_->typed += data;
    line_->changed.notify_all();
  }
  bool eof() const override {
    std::lock_guard lock(line_->mutex);
    return (line_->ended || line_->closed) && line_->to_host.empty();
  }
  void close() override {
    std::lock_guard lock(line_->mutex);
    line_->closed = true;
    line_->changed.notify_all();
  }

 private:
  std::shared_ptr<Line> line_;
};

// A host with one domain whose console the test plays the guest's side of. Only
// open_console is used by the hub.
class ConsoleHost final : public UnusedHypervisor {
 public:
  std::unique_ptr<util::ByteStream> open_console(const std::string& name, const std::string&,
                                                 bool force) override {
    EXPECT_TRUE(force);  // a stale stream of ours after a reconnect must not block the new one
    std::lock_guard lock(mutex_);
    if (name != "dom") throw libvirt::HypervisorError("domain \"" + name + "\" not found");
    if (refuse_opens_ > 0) {
      --refuse_opens_;
      ++refused_;
      throw libvirt::HypervisorError("domain \"dom\" is not running");
    }
    lines_.push_back(std::make_shared<Line>());
    return std::make_unique<FakeStream>(lines_.back());
  }

  // The console stream opened last (waits for the first).
  std::shared_ptr<Line> line() {
    EXPECT_TRUE(eventually([&] { return opened() > 0; })) << "no console was opened";
    std::lock_guard lock(mutex_);
    return lines_.empty() ? nullptr : lines_.back();
  }
  std::size_t opened() {
    std::lock_guard lock(mutex_);
    return lines_.size();
  }
  // The next `n` opens fail as for a domain that is not running (yet) or libvirtd away.
  void refuse_opens(int n) {
    std::lock_guard lock(mutex_);
    refuse_opens_ = n;
  }
  int refused() {
    std::lock_guard lock(mutex_);
    return refused_;
  }

  static void print(Line& line, const std::string& text) {
    std::lock_guard lock(line.mutex);
    line.to_host += text;
    line.changed.notify_all();
  }
  // Whether the hub has read everything the guest printed.
  static bool drained(Line& line) {
    std::lock_guard lock(line.mutex);
    return line.to_host.empty();
  }
  static std::string typed(Line& line) {
    std::lock_guard lock(line.mutex);
    return line.typed;
  }
  static bool closed(Line& line) {
    std::lock_guard lock(line.mutex);
    return line.closed;
  }
  // The guest side goes away: QEMU exiting on a reboot (`failed` false) or libvirtd dropping
  // the connection (`failed` true: the stream's reads throw).
  static void end(Line& line, bool failed) {
    std::lock_guard lock(line.mutex);
    line.ended = true;
    line.failed = failed;
    line.changed.notify_all();
  }

 private:
  std::mutex mutex_;
  std::vector<std::shared_ptr<Line>> lines_;
  int refuse_opens_ = 0;
  int refused_ = 0;
};

// A viewer's WebSocket: records what the hub sends.
class Viewer final : public SocketPeer {
 public:
  bool send(std::string bytes) override {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    received_ += bytes;
    frames_.push_back(std::move(bytes));
    return true;
  }
  void close() override {
    std::lock_guard lock(mutex_);
    closed_ = true;
  }
  bool closed() const override {
    std::lock_guard lock(mutex_);
    return closed_;
  }
  std::size_t pending() const override { return 0; }

  std::string received() const {
    std::lock_guard lock(mutex_);
    return received_;
  }
  std::string first_frame() const {
    std::lock_guard lock(mutex_);
    return frames_.empty() ? std::string() : frames_.front();
  }
  bool got(const std::string& text) const {
    return eventually([&] { return received().find(text) != std::string::npos; });
  }

 private:
  mutable std::mutex mutex_;
  std::string received_;
  std::deque<std::string> frames_;
  bool closed_ = false;
};

TEST(ConsoleHub, SeveralViewersSeeTheSameOutputAndAllMayType) {
  ConsoleHost host;
  ConsoleHub hub(console_of(host), 64 * 1024);
  auto a = std::make_shared<Viewer>();
  auto b = std::make_shared<Viewer>();
  const auto va = hub.attach("dom", a);
  hub.attach("dom", b);
  auto line = host.line();
  EXPECT_EQ(hub.viewers("dom"), 2u);

  ConsoleHost::print(*line, "debian login: ");
  EXPECT_TRUE(a->got("debian login: ")) << a->received();
  EXPECT_TRUE(b->got("debian login: ")) << b->received();

  hub.input("dom", "root\r");
  hub.input("dom", "ls\r");
  EXPECT_TRUE(eventually([&] { return ConsoleHost::typed(*line) == "root\rls\r"; }))
      << ConsoleHost::typed(*line);
  (void)va;
  EXPECT_EQ(host.opened(), 1u) << "one stream for every viewer";
  EXPECT_EQ(a->received(), b->received());
}

TEST(ConsoleHub, ANewcomerGetsTheRecentScrollbackFirstBounded) {
  ConsoleHost host;
  ConsoleHub hub(console_of(host), 16);  // bytes of scrollback
  auto a = std::make_shared<Viewer>();
  hub.attach("dom", a);
  auto line = host.line();
  ConsoleHost::print(*line, "0123456789");
  ASSERT_TRUE(a->got("0123456789"));
  ConsoleHost::print(*line, "abcdefghij");
  ASSERT_TRUE(a->got("abcdefghij"));

  auto late = std::make_shared<Viewer>();
  hub.attach("dom", late);
  EXPECT_EQ(late->first_frame(), "456789abcdefghij") << "the last 16 bytes, in one frame";
  ConsoleHost::print(*line, "!");
  EXPECT_TRUE(late->got("456789abcdefghij!")) << "the live output follows the scrollback";
  EXPECT_EQ(a->received(), "0123456789abcdefghij!") << "the first viewer gets no repeat";
}

TEST(ConsoleHub, AViewerLeavingLeavesTheStreamToTheOthers) {
  ConsoleHost host;
  ConsoleHub hub(console_of(host), 64 * 1024, 0ms);  // no linger: only viewers keep it open
  auto a = std::make_shared<Viewer>();
  auto b = std::make_shared<Viewer>();
  const auto va = hub.attach("dom", a);
  hub.attach("dom", b);
  auto line = host.line();
  ConsoleHost::print(*line, "one ");
  ASSERT_TRUE(a->got("one "));
  ASSERT_TRUE(b->got("one "));

  hub.detach("dom", va);
  EXPECT_EQ(hub.viewers("dom"), 1u);
  ConsoleHost::print(*line, "two ");
  EXPECT_TRUE(b->got("one two "));
  hub.input("dom", "still here\r");
  EXPECT_TRUE(eventually([&] { return ConsoleHost::typed(*line) == "still here\r"; }));
  EXPECT_FALSE(ConsoleHost::closed(*line));
  EXPECT_FALSE(b->closed());
  EXPECT_EQ(host.opened(), 1u);
  EXPECT_EQ(a->received(), "one ") << "nothing after leaving";
}

// A reboot that restarts QEMU ends the stream cleanly; libvirtd dropping bowline's connection
// makes it fail. Either way the hub opens the console again (after refusals while the domain
// is coming back) and the viewers neither notice nor need to reconnect.
class ConsoleHubStreamEnd : public ::testing::TestWithParam<bool> {};

TEST_P(ConsoleHubStreamEnd, TheStreamIsReopenedAndViewersKeepGoing) {
  const bool failed = GetParam();
  ConsoleHost host;
  ConsoleHub hub(console_of(host), 64 * 1024);
  auto a = std::make_shared<Viewer>();
  auto b = std::make_shared<Viewer>();
  hub.attach("dom", a);
  hub.attach("dom", b);
  auto first = host.line();
  ConsoleHost::print(*first, "before\r\n");
  ASSERT_TRUE(a->got("before\r\n"));

  host.refuse_opens(2);
  ConsoleHost::end(*first, failed);
  ASSERT_TRUE(eventually([&] { return host.opened() == 2; })) << "the console was not reopened";
  EXPECT_EQ(host.refused(), 2) << "the hub kept trying while the domain was away";
  EXPECT_EQ(hub.opens("dom"), 2u);
  auto second = host.line();
  ConsoleHost::print(*second, "after\r\n");
  EXPECT_TRUE(a->got("before\r\nafter\r\n")) << a->received();
  EXPECT_TRUE(b->got("before\r\nafter\r\n")) << b->received();
  EXPECT_FALSE(a->closed());
  EXPECT_FALSE(b->closed());
  EXPECT_EQ(hub.viewers("dom"), 2u);

  hub.input("dom", "typed after\r");
  EXPECT_TRUE(eventually([&] { return ConsoleHost::typed(*second) == "typed after\r"; }))
      << "typing reaches the new stream";
  auto late = std::make_shared<Viewer>();
  hub.attach("dom", late);
  EXPECT_EQ(late->first_frame(), "before\r\nafter\r\n") << "the scrollback spans the reopen";
}

INSTANTIATE_TEST_SUITE_P(RebootOrDroppedConnection, ConsoleHubStreamEnd, ::testing::Bool(),
                         [](const auto& param_info) {
                           return param_info.param ? "Failed" : "Ended";
                         });

TEST(ConsoleHub, TheLastViewerLeavingClosesTheStream) {
  ConsoleHost host;
  ConsoleHub hub(console_of(host), 64 * 1024, 0ms);
  auto a = std::make_shared<Viewer>();
  auto b = std::make_shared<Viewer>();
  const auto va = hub.attach("dom", a);
  const auto vb = hub.attach("dom", b);
  auto line = host.line();
  hub.detach("dom", va);
  hub.detach("dom", vb);
  EXPECT_TRUE(eventually([&] { return ConsoleHost::closed(*line); })) << "the stream stays open";
  EXPECT_EQ(hub.viewers("dom"), 0u);

  // Someone new opens it afresh.
  auto c = std::make_shared<Viewer>();
  hub.attach("dom", c);
  ASSERT_TRUE(eventually([&] { return host.opened() == 2; }));
  ConsoleHost::print(*host.line(), "fresh");
  EXPECT_TRUE(c->got("fresh"));
}

TEST(ConsoleHub, WithinTheLingerANewcomerSeesWhatTheGuestPrintedMeanwhile) {
  ConsoleHost host;
  ConsoleHub hub(console_of(host), 64 * 1024, std::chrono::minutes(10));
  auto a = std::make_shared<Viewer>();
  hub.detach("dom", hub.attach("dom", a));
  auto line = host.line();
  ConsoleHost::print(*line, "printed while nobody watched");
  ASSERT_TRUE(eventually([&] { return ConsoleHost::drained(*line); }));
  EXPECT_FALSE(ConsoleHost::closed(*line));

  auto b = std::make_shared<Viewer>();
  hub.attach("dom", b);
  EXPECT_EQ(b->first_frame(), "printed while nobody watched");
  EXPECT_EQ(host.opened(), 1u);
  EXPECT_EQ(a->received(), "");
}

// The linger is the hub's timer's: once it has passed (moved on here, not waited for) with
// nobody watching, the stream is closed.
TEST(ConsoleHub, AfterTheLingerTheStreamIsClosed) {
  ConsoleHost host;
  util::ManualTimer timer;
  ConsoleHub hub(console_of(host), 64 * 1024, std::chrono::minutes(10), timer);
  auto a = std::make_shared<Viewer>();
  hub.detach("dom", hub.attach("dom", a));
  auto line = host.line();
  timer.advance(std::chrono::minutes(9));
  std::this_thread::sleep_for(300ms);  // more than one of the hub's reads
  EXPECT_FALSE(ConsoleHost::closed(*line)) << "closed before the linger was over";
  timer.advance(std::chrono::minutes(1));
  EXPECT_TRUE(eventually([&] { return ConsoleHost::closed(*line); }));
}

TEST(ConsoleHub, StoppingClosesEveryViewer) {
  ConsoleHost host;
  auto a = std::make_shared<Viewer>();
  std::shared_ptr<Line> line;
  {
    ConsoleHub hub(console_of(host), 64 * 1024);
    hub.attach("dom", a);
    line = host.line();
  }
  EXPECT_TRUE(a->closed());
  EXPECT_TRUE(ConsoleHost::closed(*line));
}

}  // namespace
}  // namespace bowline::api::testing
