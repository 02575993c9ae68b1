#include "store/sessions.hpp"

namespace bowline::store {

namespace {

constexpr const char* kColumns =
    "id, user_id, cookie_sha256, csrf, created_at, last_seen, expires_at";

WebSession read_session(const Statement& row) {
  WebSession s;
  s.id = row.column_int64(0);
  s.user_id = row.column_int64(1);
  s.cookie_sha256 = row.column_text(2);
  s.csrf = row.column_text(3);
  s.created_at = row.column_int64(4);
  s.last_seen = row.column_int64(5);
  s.expires_at = row.column_int64(6);
  return s;
}

}  // namespace

WebSession SessionRepository::create(std::int64_t user_id, std::string_view cookie_sha256,
                                     std::string_view csrf, std::int64_t expires_at) {
  auto guard = db_.lock();
  const auto when = now();
  try {
    db_.cached(
           "INSERT INTO web_sessions (user_id, cookie_sha256, csrf, created_at, last_seen, "
           "expires_at) VALUES (?, ?, ?, ?, ?, ?)")
        ->bind_all(user_id, cookie_sha256, csrf, when, when, expires_at)
        .run();
  } catch (const SqliteError& e) {
    if (violates_foreign_key(e))
      throw NotFoundError("cannot make a session for user " + std::to_string(user_id) +
                          ": no such user");
    if (violates_unique(e, "web_sessions.cookie_sha256"))
      throw ConflictError("a session with this cookie already exists");
    throw;
  }
  auto select = db_.cached(std::string("SELECT ") + kColumns + " FROM web_sessions WHERE id = ?");
  select->bind(1, db_.last_insert_rowid()).step();
  return read_session(*select);
}

std::optional<WebSession> SessionRepository::use(std::string_view cookie_sha256, std::int64_t idle,
                                                 std::int64_t touch_after) {
  auto guard = db_.lock();
  auto select =
      db_.cached(std::string("SELECT ") + kColumns + " FROM web_sessions WHERE cookie_sha256 = ?");
  if (!select->bind(1, cookie_sha256).step()) return std::nullopt;
  auto session = read_session(*select);
  select->reset();
  const auto when = now();
  if (when >= session.expires_at || when - session.last_seen >= idle) {
    db_.cached("DELETE FROM web_sessions WHERE id = ?")->bind(1, session.id).run();
    return std::nullopt;
  }
  if (when - session.last_seen >= touch_after) {
    db_.cached("UPDATE web_sessions SET last_seen = ? WHERE id = ?")
        ->bind_all(when, session.id)
        .run();
    session.last_seen = when;
  }
  return session;
}

bool SessionRepository::remove_by_hash(std::string_view cookie_sha256) {
  auto guard = db_.lock();
  return db_.cached("DELETE FROM web_sessions WHERE cookie_sha256 = ?")
             ->bind(1, cookie_sha256)
             .run() > 0;
}

int SessionRepository::remove_for_user(std::int64_t user_id, std::optional<std::int64_t> except) {
  auto guard = db_.lock();
  return db_.cached("DELETE FROM web_sessions WHERE user_id = ? AND id IS NOT ?")
      ->bind_all(user_id, except)
      .run();
}

int SessionRepository::remove_expired(std::int64_t idle) {
  auto guard = db_.lock();
  const auto when = now();
  return db_.cached("DELETE FROM web_sessions WHERE expires_at <= ? OR last_seen <= ?")
      ->bind_all(when, when - idle)
      .run();
}

}  // namespace bowline::store
