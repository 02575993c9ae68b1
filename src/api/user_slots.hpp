// How many of one kind of long-lived connection (WebSockets into spaces, event streams) each
// user holds open, with a limit: one user's scripts or tabs cannot take every descriptor or
// thread the server has from everyone else.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace bowline::api {

class UserSlots {
 public:
  // `what` names the kind in the refusal ("WebSockets into spaces").
  UserSlots(std::size_t limit, std::string what) : limit_(limit), what_(std::move(what)) {}

  // One slot of `user`'s, released when the last copy of the result goes (keep it with the
  // connection). HttpError 429 when the user holds `limit` already.
  std::shared_ptr<void> take(std::int64_t user);
  std::size_t held(std::int64_t user) const;

 private:
  void release(std::int64_t user);

  const std::size_t limit_;
  const std::string what_;
  mutable std::mutex mutex_;
  std::map<std::int64_t, std::size_t> held_;
};

}  // namespace bowline::api
