// Web sessions: a browser's login, named by the SHA-256 of its cookie (the cookie itself is
// never stored), with the CSRF token the browser must echo on state-changing requests. A
// session ends when it has been idle too long, at its absolute expiry, or at logout.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "store/repository.hpp"

namespace bowline::store {

struct WebSession {
  std::int64_t id = 0;
  std::int64_t user_id = 0;
  std::string cookie_sha256;
  std::string csrf;
  std::int64_t created_at = 0;
  std::int64_t last_seen = 0;
  std::int64_t expires_at = 0;  // absolute
};

class SessionRepository : public Repository {
 public:
  using Repository::Repository;

  // NotFoundError for an unknown user.
  WebSession create(std::int64_t user_id, std::string_view cookie_sha256, std::string_view csrf,
                    std::int64_t expires_at);
  // The session when it exists, has not passed `expires_at` and was seen within `idle`
  // milliseconds; last_seen is moved to now when it is older than `touch_after` ms (so a busy
  // browser does not turn every read into a write). Expired sessions found here are deleted.
  std::optional<WebSession> use(std::string_view cookie_sha256, std::int64_t idle,
                                std::int64_t touch_after = 60'000);
  bool remove_by_hash(std::string_view cookie_sha256);
  // Every session of the user but `except` (the one that asked); returns how many went.
  int remove_for_user(std::int64_t user_id, std::optional<std::int64_t> except = std::nullopt);
  // Sessions past either limit; returns how many went.
  int remove_expired(std::int64_t idle);
};

}  // namespace bowline::store
