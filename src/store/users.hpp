// Users and their API tokens.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "store/records.hpp"
#include "store/repository.hpp"

namespace bowline::store {

class UserRepository : public Repository {
 public:
  using Repository::Repository;

  // ConflictError when the username is taken.
  User create(const NewUser& user);
  std::optional<User> get(std::int64_t id);
  std::optional<User> find_by_username(std::string_view username);
  std::vector<User> list();  // ordered by username
  std::int64_t count();

  // Writes username, email, timezone, service password hash, SSH keys and permissions (not the
  // web password hash, not disabled, not created_at). NotFoundError, or ConflictError on a taken
  // username.
  void update(const User& user);
  void set_password_hash(std::int64_t id, std::string_view hash);
  void set_permissions(std::int64_t id, const std::set<Permission>& permissions);
  void set_disabled(std::int64_t id, bool disabled);
  void set_quota(std::int64_t id, const Quota& quota);
  // false when the user already has this exact key.
  bool add_ssh_key(std::int64_t id, std::string_view key);
  // false when the user did not have it.
  bool remove_ssh_key(std::int64_t id, std::string_view key);
  // Takes the user's tokens with it; ConflictError while the user still owns spaces.
  void remove(std::int64_t id);

 private:
  User require(std::int64_t id);
  void write_keys(std::int64_t id, const std::vector<std::string>& keys);
};

class TokenRepository : public Repository {
 public:
  using Repository::Repository;

  // `token_sha256`: lowercase hex SHA-256 of the secret (util::sha256_hex); the secret itself
  // is never stored. NotFoundError for an unknown user.
  ApiToken create(std::int64_t user_id, std::string_view token_sha256, std::string_view name,
                  std::optional<std::int64_t> expires_at = std::nullopt);
  std::optional<ApiToken> get(std::int64_t id);
  std::optional<ApiToken> find_by_hash(std::string_view token_sha256);
  // The token when it is known and not expired, with last_used set to now; nullopt otherwise.
  std::optional<ApiToken> authenticate(std::string_view token_sha256);
  // Sets last_used to now unless another thread holds the connection (a write in progress):
  // the time is advisory, and a request must not wait for the engine's writes to record it.
  // Whether it was written.
  bool touch_unless_busy(std::int64_t id);
  std::vector<ApiToken> list_for_user(std::int64_t user_id);  // oldest first
  bool remove(std::int64_t id);
  int remove_for_user(std::int64_t user_id);  // every token of the user; how many went
  int remove_expired();                       // returns how many went
};

}  // namespace bowline::store
