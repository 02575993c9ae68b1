// Login limits that a guesser cannot turn against others (issue 14 item 7): failures count per
// client address and per username from one address, X-Forwarded-For only from trusted proxies,
// overlong usernames refused before any bookkeeping, and a login that finds every
// password-hashing slot taken answered 429 at once.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "api/auth.hpp"
#include "api_test_support.hpp"

namespace bowline::api::testing {
namespace {

class security_login : public ::testing::Test {
 protected:
  void start(std::vector<spec::Ipv4Network> trusted) {
    ApiOptions options;
    options.sessions.first_lockout = 60s;
    options.sessions.trusted_proxies = std::move(trusted);
    api_ = std::make_unique<Api>(stack_.store(), stack_.engine(), stack_.events(), options);
    server_ = std::make_unique<HttpServer>(ApiStack::test_http_options(),
                                           [this](Request& r) { return api_->handle(r); });
    server_->start();
    store::NewUser u;
    u.username = alice_ = unique("alice");
    u.password_hash = hash_password("right-" + alice_);
    stack_.store().users().create(u);
  }
  ~security_login() override {
    if (server_) server_->stop();
  }

  // POST /session as a client behind a proxy that says it is `forwarded_for` (none: no header).
  HttpResponse login(const std::string& username, const std::string& password,
                     const std::string& forwarded_for = {}) {
    HttpClient client(server_->port());
    std::vector<std::string> headers;
    if (!forwarded_for.empty()) headers.push_back("X-Forwarded-For: " + forwarded_for);
    return client.request("POST", "/api/v1/session", "",
                          json{{"username", username}, {"password", password}}.dump(), headers);
  }

  ApiStack stack_;
  std::unique_ptr<Api> api_;
  std::unique_ptr<HttpServer> server_;
  std::string alice_;
};

// A guesser at one address locks out that address and that username from there, never the
// username's owner at another address.
TEST_F(security_login, AGuesserCannotLockTheOwnerOutFromElsewhere) {
  start({*spec::Ipv4Network::parse("127.0.0.1/32")});
  for (int i = 0; i < 5; ++i) EXPECT_EQ(login(alice_, "guess", "198.51.100.66").status, 401);
  const auto locked = login(alice_, "right-" + alice_, "198.51.100.66");
  EXPECT_EQ(locked.status, 429) << locked.body;
  EXPECT_EQ(locked.header("retry-after"), "60");
  // The guesser moves on to other names: its address stays locked.
  EXPECT_EQ(login("bob", "guess", "198.51.100.66").status, 429);
  // Alice, elsewhere, is let in.
  const auto owner = login(alice_, "right-" + alice_, "198.51.100.7");
  EXPECT_EQ(owner.status, 200) << owner.body;
}

// Without trusted proxies the header is the client's own word: ignored, so rotating it does
// not escape the limit (and cannot lock out the addresses it names).
TEST_F(security_login, XForwardedForFromAnUntrustedPeerIsIgnored) {
  start({});
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(login(alice_, "guess", "198.51.100." + std::to_string(10 + i)).status, 401);
  EXPECT_EQ(login(alice_, "guess", "198.51.100.99").status, 429);
  Request direct;
  direct.remote = "127.0.0.1:4000";
  direct.headers["x-forwarded-for"] = "198.51.100.1";
  EXPECT_EQ(client_address(direct, {}), "127.0.0.1");
}

// The proxy chain is read from the right: a client cannot pose as an address by putting it
// first.
TEST_F(security_login, TheClientIsTheLastAddressNoProxyAdded) {
  const std::vector<spec::Ipv4Network> proxies{*spec::Ipv4Network::parse("10.0.0.0/8")};
  Request r;
  r.remote = "10.0.0.2:5555";
  r.headers["x-forwarded-for"] = "1.2.3.4, 198.51.100.5, 10.1.1.1";
  EXPECT_EQ(client_address(r, proxies), "198.51.100.5");
  r.remote = "198.51.100.200:5555";  // not a proxy: its header says nothing
  EXPECT_EQ(client_address(r, proxies), "198.51.100.200");
}

// A username longer than any can be costs nothing and counts nothing.
TEST_F(security_login, AnOverlongUsernameIsRefusedBeforeAnyBookkeeping) {
  start({});
  for (int i = 0; i < 20; ++i) EXPECT_EQ(login(std::string(33 + i, 'x'), "guess").status, 401);
  EXPECT_EQ(login(alice_, "right-" + alice_).status, 200) << "the address was not counted";
}

// Many logins at once: those that find both hashing slots taken are told to come back (429,
// Retry-After) instead of holding an HTTP worker while they wait.
TEST_F(security_login, ALoginThatFindsEveryHashingSlotTakenIsToldToComeBack) {
  start({*spec::Ipv4Network::parse("127.0.0.1/32")});
  std::atomic<int> busy{0}, refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i)
    threads.emplace_back([&, i] {
      const auto r = login(alice_, "guess", "198.51.100." + std::to_string(100 + i));
      if (r.status == 429 && r.body.find("checking other logins") != std::string::npos &&
          r.header("retry-after") == "1")
        ++busy;
      else if (r.status == 401)
        ++refused;
    });
  for (auto& t : threads) t.join();
  EXPECT_GT(busy.load(), 0);
  EXPECT_EQ(busy.load() + refused.load(), 16);
}

}  // namespace
}  // namespace bowline::api::testing
