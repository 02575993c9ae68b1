#include "api/user_slots.hpp"

#include "api/http.hpp"

namespace bowline::api {

std::shared_ptr<void> UserSlots::take(std::int64_t user) {
  {
    std::lock_guard lock(mutex_);
    auto& count = held_[user];
    if (count >= limit_)
      throw HttpError(429,
                      "you have " + std::to_string(count) + " " + what_ +
                          ", the most one user may (" + advice_ + ")",
                      {{"retryAfter", 1}});
    ++count;
  }
  // The deleter runs when the connection that holds the slot is gone.
  return std::shared_ptr<void>(this, [user](UserSlots* slots) { slots->release(user); });
}

std::size_t UserSlots::held(std::int64_t user) const {
  std::lock_guard lock(mutex_);
  const auto it = held_.find(user);
  return it == held_.end() ? 0 : it->second;
}

void UserSlots::release(std::int64_t user) {
  std::lock_guard lock(mutex_);
  const auto it = held_.find(user);
  if (it != held_.end() && --it->second == 0) held_.erase(it);
}

}  // namespace bowline::api
