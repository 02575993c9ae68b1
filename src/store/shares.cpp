#include "store/shares.hpp"

namespace bowline::store {

const char* to_string(ShareRole role) {
  switch (role) {
    case ShareRole::Viewer:
      return "viewer";
    case ShareRole::User:
      return "user";
    case ShareRole::Admin:
      return "admin";
  }
  return "viewer";
}

std::optional<ShareRole> parse_share_role(std::string_view text) {
  for (auto role : {ShareRole::Viewer, ShareRole::User, ShareRole::Admin})
    if (text == to_string(role)) return role;
  return std::nullopt;
}

namespace {

// Columns: space_id, user_id, username, role, created_at.
Share share_of(const Statement& row) {
  return Share{row.column_text(0), row.column_int64(1), row.column_text(2),
               parse_share_role(row.column_text(3)).value_or(ShareRole::Viewer),
               row.column_int64(4)};
}

}  // namespace

void ShareRepository::put(std::string_view space_id, std::int64_t user_id, ShareRole role) {
  auto guard = db_.lock();
  try {
    db_.cached(
           "INSERT INTO space_shares (space_id, user_id, role, created_at) VALUES (?, ?, ?, ?) "
           "ON CONFLICT (space_id, user_id) DO UPDATE SET role = excluded.role")
        ->bind_all(space_id, user_id, to_string(role), now())
        .run();
  } catch (const SqliteError& e) {
    if (violates_foreign_key(e)) throw NotFoundError("no such space or user");
    throw;
  }
}

bool ShareRepository::remove(std::string_view space_id, std::int64_t user_id) {
  auto guard = db_.lock();
  return db_.cached("DELETE FROM space_shares WHERE space_id = ? AND user_id = ?")
             ->bind_all(space_id, user_id)
             .run() > 0;
}

std::optional<ShareRole> ShareRepository::role_of(std::string_view space_id, std::int64_t user_id) {
  auto guard = db_.lock();
  auto select = db_.cached("SELECT role FROM space_shares WHERE space_id = ? AND user_id = ?");
  select->bind_all(space_id, user_id);
  if (!select->step()) return std::nullopt;
  return parse_share_role(select->column_text(0));
}

std::vector<Share> ShareRepository::of_space(std::string_view space_id) {
  auto guard = db_.lock();
  auto select = db_.cached(
      "SELECT s.space_id, s.user_id, u.username, s.role, s.created_at FROM space_shares s "
      "JOIN users u ON u.id = s.user_id WHERE s.space_id = ? ORDER BY u.username");
  select->bind_all(space_id);
  std::vector<Share> out;
  while (select->step()) out.push_back(share_of(*select));
  return out;
}

std::vector<Share> ShareRepository::of_user(std::int64_t user_id) {
  auto guard = db_.lock();
  auto select = db_.cached(
      "SELECT s.space_id, s.user_id, u.username, s.role, s.created_at FROM space_shares s "
      "JOIN users u ON u.id = s.user_id WHERE s.user_id = ? ORDER BY s.created_at, s.space_id");
  select->bind_all(user_id);
  std::vector<Share> out;
  while (select->step()) out.push_back(share_of(*select));
  return out;
}

std::vector<Share> ShareRepository::all() {
  auto guard = db_.lock();
  auto select = db_.cached(
      "SELECT s.space_id, s.user_id, u.username, s.role, s.created_at FROM space_shares s "
      "JOIN users u ON u.id = s.user_id ORDER BY s.created_at");
  std::vector<Share> out;
  while (select->step()) out.push_back(share_of(*select));
  return out;
}

}  // namespace bowline::store
