// Login limits that a guesser cannot turn against others: failures count per client address
// (IPv6 by its /64), per username from one address and per account from anywhere (paced, not
// locked), X-Forwarded-For only from trusted proxies, overlong usernames refused before any
// bookkeeping, concurrent guesses counted before they are checked, and the password checks
// taken in turn, one per client address, so that a few looping guessers cannot turn every
// login into 429.
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

// A stolen session (or token) is no way to guess its owner's password: a wrong current
// password in a password change counts as a failed login of the account, and the account's
// owner logging in from elsewhere still gets in.
TEST_F(security_login, WrongCurrentPasswordsInAPasswordChangeCountAsFailedLogins) {
  start({});
  const auto user = stack_.store().users().find_by_username(alice_);
  const auto token = issue_token(stack_.store(), user->id, "stolen");
  const auto change = [&](const std::string& current) {
    HttpClient client(server_->port());
    return client.request(
        "PATCH", "/api/v1/users/" + alice_, token,
        json{{"password", "a-new-password-1"}, {"currentPassword", current}}.dump());
  };
  for (int i = 0; i < 5; ++i) EXPECT_EQ(change("guess" + std::to_string(i)).status, 403);
  const auto paced = change("right-" + alice_);
  EXPECT_EQ(paced.status, 429) << "guessing through a session goes on unpaced: " << paced.body;
  EXPECT_FALSE(paced.header("retry-after").empty());
  EXPECT_TRUE(
      verify_password(stack_.store().users().get(user->id)->password_hash, "right-" + alice_));
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

// Two guessers looping wrong logins from ever new addresses used to keep both hashing slots
// taken, so that real logins were answered 429: now each waits its turn, and the owner gets in
// every time.
TEST_F(security_login, TwoLoopingGuessersCannotTurnEveryLoginInto429) {
  start({*spec::Ipv4Network::parse("127.0.0.1/32")});
  std::atomic<bool> stop{false};
  std::atomic<int> guesses{0};
  std::vector<std::thread> guessers;
  for (int g = 0; g < 2; ++g)
    guessers.emplace_back([&, g] {
      for (int i = 0; !stop; ++i) {
        login("nobody" + std::to_string(g), "guess",
              "203.0.113." + std::to_string((i * 2 + g) % 250 + 1));
        ++guesses;
      }
    });
  std::this_thread::sleep_for(300ms);
  int admitted = 0;
  std::string last;
  for (int i = 0; i < 10; ++i) {
    const auto r = login(alice_, "right-" + alice_, "198.51.100.7");
    if (r.status == 200) ++admitted;
    last = std::to_string(r.status) + " " + r.body;
  }
  stop = true;
  for (auto& t : guessers) t.join();
  EXPECT_EQ(admitted, 10) << last;
  EXPECT_GT(guesses.load(), 10) << "the guessers did run meanwhile";
}

// Guesses from one address at the same moment: one password check at a time per address, and
// each counts before it is checked, so no burst gets more than the free failures.
TEST_F(security_login, ConcurrentGuessesFromOneAddressGetNoMoreThanTheFreeFailures) {
  start({*spec::Ipv4Network::parse("127.0.0.1/32")});
  std::atomic<int> wrong{0}, later{0};
  for (int round = 0; round < 3; ++round) {
    std::vector<std::thread> threads;
    for (int i = 0; i < 16; ++i)
      threads.emplace_back([&] {
        const auto r = login(alice_, "guess", "198.51.100.66");
        if (r.status == 401) ++wrong;
        if (r.status == 429 && !r.header("retry-after").empty()) ++later;
      });
    for (auto& t : threads) t.join();
  }
  EXPECT_GE(wrong.load(), 1);
  EXPECT_LE(wrong.load(), 5);
  EXPECT_EQ(wrong.load() + later.load(), 48);
}

// One account guessed from many addresses: past the account's free failures its tries are
// paced, except from an address it logged in from before; nobody is locked out for good.
TEST_F(security_login, AnAccountGuessedFromEverywhereIsPacedButItsOwnerGetsIn) {
  start({*spec::Ipv4Network::parse("127.0.0.1/32")});
  ASSERT_EQ(login(alice_, "right-" + alice_, "198.51.100.7").status, 200);  // her usual place
  for (int i = 0; i < 20; ++i)
    EXPECT_EQ(login(alice_, "guess", "203.0.113." + std::to_string(i + 1)).status, 401);
  const auto paced = login(alice_, "guess", "203.0.113.200");
  EXPECT_EQ(paced.status, 429) << paced.body;
  const auto wait = std::stoi(paced.header("retry-after"));
  EXPECT_GE(wait, 1);
  EXPECT_LE(wait, 30);  // paced, never locked
  EXPECT_EQ(login(alice_, "right-" + alice_, "198.51.100.7").status, 200);
  EXPECT_EQ(login(alice_, "right-" + alice_, "203.0.113.201").status, 429);  // a new place waits
}

// An IPv6 client counts by its /64: walking through the addresses of one network does not give
// more guesses.
TEST_F(security_login, AnIpv6ClientCountsByItsSlash64) {
  start({*spec::Ipv4Network::parse("127.0.0.1/32")});
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(login("bob", "guess", "2001:db8:0:1::" + std::to_string(i + 1)).status, 401);
  EXPECT_EQ(login("bob", "guess", "2001:db8:0:1:ffff::9").status, 429);
  EXPECT_EQ(login("bob", "guess", "2001:db8:0:2::1").status, 401);
}

}  // namespace
}  // namespace bowline::api::testing
