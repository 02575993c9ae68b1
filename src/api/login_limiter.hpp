// Failed logins, counted so that guessing slows down and nobody else is locked out:
//   - per client address (an IPv6 address by its /64) and per username from one address:
//     after `free_failures`, further tries from there wait (first_lockout, doubling, at most
//     max_lockout);
//   - per account from any address: after `free_account_failures`, one try at a time with a
//     pause (first_lockout, doubling, at most max_account_pause), except from an address the
//     account logged in from lately: a guesser spread over many addresses is slowed down, the
//     owner at their usual address is not, and elsewhere waits seconds, never for good.
// An attempt counts as in flight from its start, so concurrent guesses cannot all pass the
// check before the first failure is counted.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace bowline::api {

struct LoginLimits {
  int free_failures = 5;
  std::chrono::milliseconds first_lockout{std::chrono::seconds(1)};
  std::chrono::milliseconds max_lockout{std::chrono::minutes(15)};
  int free_account_failures = 20;
  std::chrono::milliseconds max_account_pause{std::chrono::seconds(30)};
};

class LoginLimiter {
 public:
  explicit LoginLimiter(LoginLimits limits) : limits_(limits) {}

  class Attempt;
  // `address`: the client's, as address_prefix gives it. HttpError 429 with Retry-After while
  // one of the attempt's counts says wait.
  std::shared_ptr<Attempt> begin(const std::string& username, const std::string& address,
                                 std::int64_t now);
  void failed(Attempt& attempt, std::int64_t now);
  void succeeded(Attempt& attempt, std::int64_t now);

 private:
  struct Failures {
    int count = 0;
    int in_flight = 0;
    std::int64_t until = 0;  // unix ms
    std::int64_t last = 0;
  };
  struct Key {
    std::string name;
    int free;
    std::chrono::milliseconds max_pause;
  };
  std::int64_t wait_for(const Key& key, std::int64_t now);
  void count_failure(const Key& key, std::int64_t now);
  void end(Attempt& attempt);
  void forget_old(std::int64_t now);

  const LoginLimits limits_;
  std::mutex mutex_;
  std::map<std::string, Failures> failures_;
  std::map<std::string, std::map<std::string, std::int64_t>> known_;  // account -> address -> ms
};

class LoginLimiter::Attempt {
 public:
  Attempt(LoginLimiter& limiter, std::vector<Key> keys, std::string account, std::string address)
      : limiter_(limiter),
        keys_(std::move(keys)),
        account_(std::move(account)),
        address_(std::move(address)) {}
  ~Attempt() { limiter_.end(*this); }
  Attempt(const Attempt&) = delete;
  Attempt& operator=(const Attempt&) = delete;

 private:
  friend class LoginLimiter;
  LoginLimiter& limiter_;
  std::vector<Key> keys_;
  std::string account_, address_;
  bool ended_ = false;
};

}  // namespace bowline::api
