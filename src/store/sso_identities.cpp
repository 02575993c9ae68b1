#include "store/sso_identities.hpp"

namespace bowline::store {

void SsoIdentityRepository::link(std::string_view issuer, std::string_view subject,
                                 std::int64_t user_id) {
  auto guard = db_.lock();
  try {
    db_.cached(
           "INSERT INTO sso_identities (issuer, subject, user_id, created_at) VALUES (?, ?, ?, ?)")
        ->bind_all(issuer, subject, user_id, now())
        .run();
  } catch (const SqliteError& e) {
    if (violates_foreign_key(e)) throw NotFoundError("no such user");
    if (violates_unique(e, "sso_identities.subject"))
      throw ConflictError("this identity is linked to a user already");
    throw;
  }
}

std::optional<std::int64_t> SsoIdentityRepository::user_of(std::string_view issuer,
                                                           std::string_view subject) {
  auto guard = db_.lock();
  auto select = db_.cached("SELECT user_id FROM sso_identities WHERE issuer = ? AND subject = ?");
  select->bind_all(issuer, subject);
  if (!select->step()) return std::nullopt;
  return select->column_int64(0);
}

bool SsoIdentityRepository::linked(std::int64_t user_id) {
  auto guard = db_.lock();
  auto select = db_.cached("SELECT 1 FROM sso_identities WHERE user_id = ? LIMIT 1");
  select->bind_all(user_id);
  return select->step();
}

}  // namespace bowline::store
