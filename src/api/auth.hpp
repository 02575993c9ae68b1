// Credentials: API tokens (random secrets of which only the SHA-256 is kept) and web
// passwords (argon2id through libsodium). Guest passwords are a different matter (plan/).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "store/store.hpp"

namespace bowline::api {

// 32 random bytes (libsodium), as 64 lowercase hex characters.
std::string new_token();
// What the store keeps of a token: lowercase hex SHA-256.
std::string token_hash(std::string_view token);

// argon2id with libsodium's interactive limits, in its self-describing string form.
std::string hash_password(std::string_view password);
bool verify_password(std::string_view hash, std::string_view password);

// The user behind an `Authorization: Bearer <token>` header; nullopt for a missing, malformed,
// unknown or expired token (and for a token whose user is gone or disabled). `expires_at`, when
// given, gets the token's expiry.
std::optional<store::User> authenticate(store::Store& store, std::string_view authorization,
                                        std::optional<std::int64_t>* expires_at = nullptr);

// Makes a first API token for `user_id` named `name`; returns the secret (shown once).
std::string issue_token(store::Store& store, std::int64_t user_id, std::string_view name,
                        std::optional<std::int64_t> expires_at = std::nullopt);

}  // namespace bowline::api
