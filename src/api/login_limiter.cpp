#include "api/login_limiter.hpp"

#include <algorithm>

#include "api/http.hpp"

namespace bowline::api {

namespace {

constexpr std::int64_t kForgetAfterMs = 24LL * 3600 * 1000;
constexpr std::int64_t kKnownForMs = 30LL * 24 * 3600 * 1000;

[[noreturn]] void retry_after(std::int64_t seconds) {
  throw HttpError(429, "too many failed logins: try again in " + std::to_string(seconds) + " s",
                  {{"retryAfter", seconds}});
}

}  // namespace

std::shared_ptr<LoginLimiter::Attempt> LoginLimiter::begin(const std::string& username,
                                                           const std::string& address,
                                                           std::int64_t now) {
  std::vector<Key> keys{
      {"address:" + address, limits_.free_failures, limits_.max_lockout},
      {"user:" + username + "@" + address, limits_.free_failures, limits_.max_lockout}};
  std::lock_guard lock(mutex_);
  forget_old(now);
  const auto known = known_.find(username);
  if (known == known_.end() || !known->second.count(address))
    keys.push_back(
        {"account:" + username, limits_.free_account_failures, limits_.max_account_pause});
  std::int64_t wait = 0;
  for (const auto& key : keys) wait = std::max(wait, wait_for(key, now));
  if (wait > 0) retry_after(wait);
  for (const auto& key : keys) ++failures_[key.name].in_flight;
  return std::make_shared<Attempt>(*this, std::move(keys), username, address);
}

void LoginLimiter::failed(Attempt& attempt, std::int64_t now) {
  std::lock_guard lock(mutex_);
  for (const auto& key : attempt.keys_) count_failure(key, now);
}

void LoginLimiter::succeeded(Attempt& attempt, std::int64_t now) {
  std::lock_guard lock(mutex_);
  if (auto it = failures_.find("user:" + attempt.account_ + "@" + attempt.address_);
      it != failures_.end())
    it->second.count = 0, it->second.until = 0;
  known_[attempt.account_][attempt.address_] = now;
}

// A key that has used its free failures lets one attempt through at a time, once its pause
// is over.
std::int64_t LoginLimiter::wait_for(const Key& key, std::int64_t now) {
  const auto it = failures_.find(key.name);
  if (it == failures_.end()) return 0;
  const auto& f = it->second;
  if (f.until > now) return (f.until - now + 999) / 1000;
  if (f.in_flight > 0 && f.count + f.in_flight >= key.free) return 1;
  return 0;
}

void LoginLimiter::count_failure(const Key& key, std::int64_t now) {
  auto& f = failures_[key.name];
  if (now - f.last > kForgetAfterMs) f.count = 0;
  f.last = now;
  if (++f.count < key.free) return;
  const int doublings = std::min(f.count - key.free, 20);
  f.until = now + std::min<std::int64_t>(limits_.first_lockout.count() << doublings,
                                         key.max_pause.count());
}

void LoginLimiter::end(Attempt& attempt) {
  std::lock_guard lock(mutex_);
  for (const auto& key : attempt.keys_) {
    const auto it = failures_.find(key.name);
    if (it == failures_.end()) continue;
    --it->second.in_flight;
    if (it->second.count == 0 && it->second.in_flight == 0) failures_.erase(it);
  }
}

// Old entries go; a flood of names or addresses cannot grow the maps for ever.
void LoginLimiter::forget_old(std::int64_t now) {
  if (failures_.size() > 10'000)
    std::erase_if(failures_, [&](const auto& e) {
      return e.second.in_flight == 0 && now - e.second.last > kForgetAfterMs;
    });
  if (known_.size() > 10'000)
    for (auto it = known_.begin(); it != known_.end();) {
      std::erase_if(it->second, [&](const auto& e) { return now - e.second > kKnownForMs; });
      it = it->second.empty() ? known_.erase(it) : std::next(it);
    }
}

}  // namespace bowline::api
