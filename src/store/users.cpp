#include "store/users.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace bowline::store {

namespace {

constexpr const char* kUserColumns =
    "id, username, email, timezone, service_password, password_hash, ssh_keys, permissions, "
    "created_at, disabled, quota_spaces, quota_cpus, quota_memory, quota_disk";

std::string keys_json(const std::vector<std::string>& keys) {
  return nlohmann::json(keys).dump();
}

std::string permissions_json(const std::set<Permission>& permissions) {
  auto array = nlohmann::json::array();
  for (auto permission : permissions) array.push_back(to_string(permission));
  return array.dump();
}

nlohmann::json parse_array(const std::string& text, const char* column, std::int64_t id) {
  auto value = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!value.is_array())
    throw StoreError("user " + std::to_string(id) + ": column " + column +
                     " is not a JSON array: " + text);
  return value;
}

User read_user(const Statement& row) {
  User user;
  user.id = row.column_int64(0);
  user.username = row.column_text(1);
  user.email = row.column_text(2);
  user.timezone = row.column_text(3);
  user.service_password_hash = row.column_optional_text(4);
  user.password_hash = row.column_text(5);
  for (const auto& key : parse_array(row.column_text(6), "ssh_keys", user.id)) {
    if (!key.is_string()) throw StoreError("user " + std::to_string(user.id) + ": bad ssh key");
    user.ssh_keys.push_back(key.get<std::string>());
  }
  for (const auto& name : parse_array(row.column_text(7), "permissions", user.id)) {
    auto permission = name.is_string() ? parse_permission(name.get<std::string>()) : std::nullopt;
    if (!permission)
      throw StoreError("user " + std::to_string(user.id) + ": unknown permission " + name.dump());
    user.permissions.insert(*permission);
  }
  user.created_at = row.column_int64(8);
  user.disabled = row.column_int64(9) != 0;
  user.quota = {row.column_optional_int64(10), row.column_optional_int64(11),
                row.column_optional_int64(12), row.column_optional_int64(13)};
  return user;
}

constexpr const char* kTokenColumns =
    "id, user_id, token_sha256, name, created_at, last_used, expires_at";

ApiToken read_token(const Statement& row) {
  ApiToken token;
  token.id = row.column_int64(0);
  token.user_id = row.column_int64(1);
  token.token_sha256 = row.column_text(2);
  token.name = row.column_text(3);
  token.created_at = row.column_int64(4);
  token.last_used = row.column_optional_int64(5);
  token.expires_at = row.column_optional_int64(6);
  return token;
}

[[noreturn]] void username_taken(std::string_view username) {
  throw ConflictError("a user named '" + std::string(username) + "' already exists");
}

}  // namespace

// ---- users --------------------------------------------------------------------------------

User UserRepository::create(const NewUser& user) {
  if (user.username.empty()) throw StoreError("a user needs a username");
  auto guard = db_.lock();
  auto insert = db_.cached(
      "INSERT INTO users (username, email, timezone, service_password, password_hash, "
      "ssh_keys, permissions, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
  try {
    insert->bind_all(user.username, user.email, user.timezone, user.service_password_hash,
                     user.password_hash, keys_json(user.ssh_keys),
                     permissions_json(user.permissions), now());
    insert->run();
  } catch (const SqliteError& e) {
    if (violates_unique(e, "users.username")) username_taken(user.username);
    throw;
  }
  return require(db_.last_insert_rowid());
}

std::optional<User> UserRepository::get(std::int64_t id) {
  auto guard = db_.lock();
  auto select = db_.cached(std::string("SELECT ") + kUserColumns + " FROM users WHERE id = ?");
  select->bind(1, id);
  if (!select->step()) return std::nullopt;
  return read_user(*select);
}

User UserRepository::require(std::int64_t id) {
  auto user = get(id);
  if (!user) throw NotFoundError("no user with id " + std::to_string(id));
  return *user;
}

std::optional<User> UserRepository::find_by_username(std::string_view username) {
  auto guard = db_.lock();
  auto select =
      db_.cached(std::string("SELECT ") + kUserColumns + " FROM users WHERE username = ?");
  select->bind(1, username);
  if (!select->step()) return std::nullopt;
  return read_user(*select);
}

std::vector<User> UserRepository::list() {
  auto guard = db_.lock();
  auto select = db_.cached(std::string("SELECT ") + kUserColumns + " FROM users ORDER BY username");
  std::vector<User> users;
  while (select->step()) users.push_back(read_user(*select));
  return users;
}

std::int64_t UserRepository::count() {
  auto guard = db_.lock();
  auto select = db_.cached("SELECT count(*) FROM users");
  select->step();
  return select->column_int64(0);
}

void UserRepository::update(const User& user) {
  auto guard = db_.lock();
  auto update = db_.cached(
      "UPDATE users SET username = ?, email = ?, timezone = ?, service_password = ?, "
      "ssh_keys = ?, permissions = ? WHERE id = ?");
  int changed = 0;
  try {
    update->bind_all(user.username, user.email, user.timezone, user.service_password_hash,
                     keys_json(user.ssh_keys), permissions_json(user.permissions), user.id);
    changed = update->run();
  } catch (const SqliteError& e) {
    if (violates_unique(e, "users.username")) username_taken(user.username);
    throw;
  }
  if (changed == 0) throw NotFoundError("no user with id " + std::to_string(user.id));
}

void UserRepository::set_password_hash(std::int64_t id, std::string_view hash) {
  auto guard = db_.lock();
  auto update = db_.cached("UPDATE users SET password_hash = ? WHERE id = ?");
  if (update->bind_all(hash, id).run() == 0)
    throw NotFoundError("no user with id " + std::to_string(id));
}

void UserRepository::set_disabled(std::int64_t id, bool disabled) {
  auto guard = db_.lock();
  auto update = db_.cached("UPDATE users SET disabled = ? WHERE id = ?");
  if (update->bind_all(disabled ? 1 : 0, id).run() == 0)
    throw NotFoundError("no user with id " + std::to_string(id));
}

void UserRepository::set_quota(std::int64_t id, const Quota& quota) {
  auto guard = db_.lock();
  auto update = db_.cached(
      "UPDATE users SET quota_spaces = ?, quota_cpus = ?, quota_memory = ?, quota_disk = ? "
      "WHERE id = ?");
  if (update->bind_all(quota.spaces, quota.cpus, quota.memory, quota.disk, id).run() == 0)
    throw NotFoundError("no user with id " + std::to_string(id));
}

void UserRepository::set_permissions(std::int64_t id, const std::set<Permission>& permissions) {
  auto guard = db_.lock();
  auto update = db_.cached("UPDATE users SET permissions = ? WHERE id = ?");
  if (update->bind_all(permissions_json(permissions), id).run() == 0)
    throw NotFoundError("no user with id " + std::to_string(id));
}

void UserRepository::write_keys(std::int64_t id, const std::vector<std::string>& keys) {
  auto update = db_.cached("UPDATE users SET ssh_keys = ? WHERE id = ?");
  update->bind_all(keys_json(keys), id).run();
}

bool UserRepository::add_ssh_key(std::int64_t id, std::string_view key) {
  Transaction transaction(db_);
  auto keys = require(id).ssh_keys;
  if (std::find(keys.begin(), keys.end(), key) != keys.end()) return false;
  keys.emplace_back(key);
  write_keys(id, keys);
  transaction.commit();
  return true;
}

bool UserRepository::remove_ssh_key(std::int64_t id, std::string_view key) {
  Transaction transaction(db_);
  auto keys = require(id).ssh_keys;
  auto it = std::find(keys.begin(), keys.end(), key);
  if (it == keys.end()) return false;
  keys.erase(it);
  write_keys(id, keys);
  transaction.commit();
  return true;
}

void UserRepository::remove(std::int64_t id) {
  Transaction transaction(db_);
  auto user = require(id);
  auto owned = db_.cached("SELECT count(*) FROM spaces WHERE owner_id = ?");
  owned->bind(1, id).step();
  if (auto spaces = owned->column_int64(0); spaces > 0)
    throw ConflictError("user '" + user.username + "' still owns " + std::to_string(spaces) +
                        (spaces == 1 ? " space" : " spaces") + "; delete them first");
  db_.cached("DELETE FROM users WHERE id = ?")->bind(1, id).run();
  transaction.commit();
}

// ---- tokens -------------------------------------------------------------------------------

ApiToken TokenRepository::create(std::int64_t user_id, std::string_view token_sha256,
                                 std::string_view name, std::optional<std::int64_t> expires_at) {
  auto guard = db_.lock();
  auto insert = db_.cached(
      "INSERT INTO api_tokens (user_id, token_sha256, name, created_at, expires_at) "
      "VALUES (?, ?, ?, ?, ?)");
  try {
    insert->bind_all(user_id, token_sha256, name, now(), expires_at).run();
  } catch (const SqliteError& e) {
    if (violates_foreign_key(e))
      throw NotFoundError("cannot make a token for user " + std::to_string(user_id) +
                          ": no such user");
    if (violates_unique(e, "api_tokens.token_sha256"))
      throw ConflictError("a token with this hash already exists");
    throw;
  }
  return *get(db_.last_insert_rowid());
}

std::optional<ApiToken> TokenRepository::get(std::int64_t id) {
  auto guard = db_.lock();
  auto select =
      db_.cached(std::string("SELECT ") + kTokenColumns + " FROM api_tokens WHERE id = ?");
  if (!select->bind(1, id).step()) return std::nullopt;
  return read_token(*select);
}

std::optional<ApiToken> TokenRepository::find_by_hash(std::string_view token_sha256) {
  auto guard = db_.lock();
  auto select = db_.cached(std::string("SELECT ") + kTokenColumns +
                           " FROM api_tokens WHERE token_sha256 = ?");
  if (!select->bind(1, token_sha256).step()) return std::nullopt;
  return read_token(*select);
}

std::optional<ApiToken> TokenRepository::authenticate(std::string_view token_sha256) {
  auto guard = db_.lock();
  auto token = find_by_hash(token_sha256);
  auto when = now();
  if (!token || token->expired(when)) return std::nullopt;
  db_.cached("UPDATE api_tokens SET last_used = ? WHERE id = ?")->bind_all(when, token->id).run();
  token->last_used = when;
  return token;
}

bool TokenRepository::touch_unless_busy(std::int64_t id) {
  auto guard = db_.try_lock();
  if (!guard.owns_lock()) return false;
  db_.cached("UPDATE api_tokens SET last_used = ? WHERE id = ?")->bind_all(now(), id).run();
  return true;
}

std::vector<ApiToken> TokenRepository::list_for_user(std::int64_t user_id) {
  auto guard = db_.lock();
  auto select = db_.cached(std::string("SELECT ") + kTokenColumns +
                           " FROM api_tokens WHERE user_id = ? ORDER BY id");
  select->bind(1, user_id);
  std::vector<ApiToken> tokens;
  while (select->step()) tokens.push_back(read_token(*select));
  return tokens;
}

bool TokenRepository::remove(std::int64_t id) {
  auto guard = db_.lock();
  return db_.cached("DELETE FROM api_tokens WHERE id = ?")->bind(1, id).run() > 0;
}

int TokenRepository::remove_for_user(std::int64_t user_id) {
  auto guard = db_.lock();
  return db_.cached("DELETE FROM api_tokens WHERE user_id = ?")->bind(1, user_id).run();
}

int TokenRepository::remove_expired() {
  auto guard = db_.lock();
  return db_.cached("DELETE FROM api_tokens WHERE expires_at IS NOT NULL AND expires_at <= ?")
      ->bind(1, now())
      .run();
}

}  // namespace bowline::store
