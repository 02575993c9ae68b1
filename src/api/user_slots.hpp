// How many of one kind of long-lived connection (WebSockets into spaces, event streams) or of
// slow answer each user holds, with a limit: one user's scripts or tabs cannot take every
// descriptor or thread the server has from everyone else.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace bowline::api {

class UserSlots {
 public:
  // `what` names the kind in the refusal ("WebSockets into spaces open"), `advice` what to
  // do about it.
  UserSlots(std::size_t limit, std::string what, std::string advice = "close one first")
      : limit_(limit), what_(std::move(what)), advice_(std::move(advice)) {}

  // One slot of `user`'s, released when the last copy of the result goes (keep it with the
  // connection). HttpError 429 when the user holds `limit` already.
  std::shared_ptr<void> take(std::int64_t user);
  std::size_t held(std::int64_t user) const;

 private:
  void release(std::int64_t user);

  const std::size_t limit_;
  const std::string what_;
  const std::string advice_;
  mutable std::mutex mutex_;
  std::map<std::int64_t, std::size_t> held_;
};

}  // namespace bowline::api
