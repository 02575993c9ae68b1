// The per-user limit on slow requests (server.limits.slow_requests_per_user): answers that run
// off the HTTP workers, such as a disk made from an image download. One user at the limit is
// refused the next with a 429 that says why; other users, and that user's quick requests, are
// still answered; a finished one frees its place. The downloads come from a server that
// trickles, so they stay slow for as long as the test needs.
#include <gtest/gtest.h>

#include <future>

#include "api_test_support.hpp"

namespace bowline::api::testing {
namespace {

// An HTTP server on 127.0.0.1 that answers every request with a large file, a byte every
// 100 ms, until stopped (then its connections close and new ones are refused).
class TrickleServer {
 public:
  TrickleServer() {
    listen_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof addr;
    if (::bind(listen_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_, 16) != 0 ||
        ::getsockname(listen_, reinterpret_cast<sockaddr*>(&addr), &length) != 0)
      throw std::runtime_error("the trickling server cannot listen");
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~TrickleServer() { stop(); }
  TrickleServer(const TrickleServer&) = delete;
  TrickleServer& operator=(const TrickleServer&) = delete;

  void stop() {
    if (stopping_.exchange(true)) return;
    acceptor_.join();
    for (auto& feeder : feeders_) feeder.join();
    ::close(listen_);
  }
  std::string url(const std::string& name) const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + name;
  }
  int connections() const { return accepted_.load(); }

  // Until `count` connections came, or `timeout`.
  bool wait_for(int count, std::chrono::milliseconds timeout) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (connections() < count && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(20ms);
    return connections() >= count;
  }

 private:
  void accept_loop() {
    while (!stopping_) {
      pollfd p{listen_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int fd = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      ++accepted_;
      feeders_.emplace_back([this, fd] { feed(fd); });
    }
  }
  void feed(int fd) {
    receive_some(fd, 1s);  // whatever was asked, the answer is the same
    try {
      send_all(fd,
               "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
               "Content-Length: 1073741824\r\n\r\n");
      while (!stopping_) {
        send_all(fd, "x");
        std::this_thread::sleep_for(100ms);
      }
    } catch (const std::exception&) {
      // The client went away.
    }
    ::close(fd);
  }

  int listen_ = -1;
  unsigned short port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  std::thread acceptor_;
  std::vector<std::thread> feeders_;  // touched by the acceptor only, until stop() joined it
};

class security_slow_requests : public ::testing::Test {
 protected:
  security_slow_requests() {
    ApiOptions options;
    options.max_slow_requests_per_user = 2;
    api_ = std::make_unique<Api>(stack_.store(), stack_.engine(), stack_.events(), options);
    server_ = std::make_unique<HttpServer>(ApiStack::test_http_options(),
                                           [this](Request& r) { return api_->handle(r); });
    server_->start();
  }
  ~security_slow_requests() override {
    trickle_.stop();  // the downloads fail, their answers go out, the threads can end
    for (auto& d : downloads_)
      if (d.valid()) d.wait();
    server_->stop();
    stack_.engine().wait_idle();
  }

  // A disk made from an image of the trickling server, asked for on a thread of its own:
  // its answer comes once the server stops.
  void start_download(const std::string& token, const std::string& name) {
    downloads_.push_back(std::async(std::launch::async, [this, token, name] {
      HttpClient client(server_->port());
      return client.post("/api/v1/disks", token,
                         {{"name", name},
                          {"image", trickle_.url(name + ".qcow2")},
                          {"imageChecksum", "sha256:" + std::string(64, '0')}});
    }));
  }
  HttpResponse blank_disk(const std::string& token, const std::string& name) {
    HttpClient client(server_->port());
    return client.post("/api/v1/disks", token, {{"name", name}, {"size", "16Mi"}});
  }

  ApiStack stack_;
  TrickleServer trickle_;
  std::unique_ptr<Api> api_;
  std::unique_ptr<HttpServer> server_;
  std::vector<std::future<HttpResponse>> downloads_;
};

TEST_F(security_slow_requests, OneUserAtTheLimitIsRefusedTheNextWithA429ThatSaysWhy) {
  const auto alice = stack_.make_user(unique("alice"));
  const auto bob = stack_.make_user(unique("bob"));
  start_download(alice, "one");
  start_download(alice, "two");
  ASSERT_TRUE(trickle_.wait_for(2, 10s)) << "both downloads should be under way";

  const auto refused = blank_disk(alice, "three");
  EXPECT_EQ(refused.status, 429) << refused.body;
  EXPECT_EQ(refused.parsed().value("error", ""),
            "you have 2 requests waiting on a space, the most one user may (wait for one to be "
            "answered)")
      << refused.body;
  EXPECT_EQ(refused.header("retry-after"), "1");
  EXPECT_EQ(trickle_.connections(), 2) << "the refused request must not have started";

  // Requests that are not slow are not counted; another user's slow ones are their own.
  HttpClient client(server_->port());
  EXPECT_EQ(client.get("/api/v1/whoami", alice).status, 200);
  EXPECT_EQ(client.get("/api/v1/whoami", bob).status, 200);
  const auto bobs = blank_disk(bob, "scratch");
  EXPECT_EQ(bobs.status, 201) << bobs.body;
}

TEST_F(security_slow_requests, AFinishedSlowRequestFreesItsPlace) {
  const auto alice = stack_.make_user(unique("alice"));
  start_download(alice, "one");
  start_download(alice, "two");
  ASSERT_TRUE(trickle_.wait_for(2, 10s)) << "both downloads should be under way";
  ASSERT_EQ(blank_disk(alice, "early").status, 429);

  trickle_.stop();
  for (auto& d : downloads_) {
    const auto answered = d.get();
    EXPECT_EQ(answered.status, 422) << answered.body;  // the download was cut off
  }
  const auto again = blank_disk(alice, "later");
  EXPECT_EQ(again.status, 201) << again.body;
}

// A download that trickles for as long as its server likes must not hold up other users'
// disks: only its own user's slow requests are counted against it.
TEST_F(security_slow_requests, AnotherUsersDiskIsMadeWhileOneUsersDownloadTrickles) {
  const auto alice = stack_.make_user(unique("alice"));
  const auto bob = stack_.make_user(unique("bob"));
  start_download(alice, "one");
  ASSERT_TRUE(trickle_.wait_for(1, 10s));
  auto bobs = std::async(std::launch::async, [&] { return blank_disk(bob, "scratch"); });
  const bool answered = bobs.wait_for(5s) == std::future_status::ready;
  trickle_.stop();  // either way: a waiting request is let go
  EXPECT_TRUE(answered) << "bob's disk waited on alice's download";
  EXPECT_EQ(bobs.get().status, 201);
}

}  // namespace
}  // namespace bowline::api::testing
