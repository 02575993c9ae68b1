#include "api/auth.hpp"

#include <sodium.h>

#include <mutex>
#include <stdexcept>

#include "util/hash.hpp"
#include "util/strings.hpp"

namespace bowline::api {

namespace {

void ensure_sodium() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (sodium_init() < 0) throw std::runtime_error("libsodium cannot be initialised");
  });
}

}  // namespace

std::string new_token() {
  ensure_sodium();
  unsigned char bytes[32];
  randombytes_buf(bytes, sizeof bytes);
  char hex[sizeof bytes * 2 + 1];
  sodium_bin2hex(hex, sizeof hex, bytes, sizeof bytes);
  sodium_memzero(bytes, sizeof bytes);
  return hex;
}

std::string token_hash(std::string_view token) {
  return util::sha256_hex(token);
}

std::string hash_password(std::string_view password) {
  ensure_sodium();
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str(out, password.data(), password.size(), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                        crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0)
    throw std::runtime_error("cannot hash the password (out of memory)");
  return out;
}

bool verify_password(std::string_view hash, std::string_view password) {
  ensure_sodium();
  if (hash.empty() || hash.size() >= crypto_pwhash_STRBYTES) return false;
  const std::string stored(hash);  // NUL-terminated for libsodium
  return crypto_pwhash_str_verify(stored.c_str(), password.data(), password.size()) == 0;
}

std::optional<store::User> authenticate(store::Store& store, std::string_view authorization,
                                        std::optional<std::int64_t>* expires_at) {
  const auto value = util::trim(authorization);
  if (!util::starts_with_ci(value, "bearer ")) return std::nullopt;
  const auto token = util::trim(std::string_view(value).substr(7));
  // Tokens are 64 hex characters; anything else is not worth a database lookup.
  if (token.size() != 64 || token.find_first_not_of("0123456789abcdef") != std::string::npos)
    return std::nullopt;
  const auto hash = token_hash(token);
  // Reads on the store's reader connection, so no request waits for the engine's writes;
  // last_used is written at most once a minute per token (a busy client does not turn every
  // GET into a write), and skipped while a write is in progress.
  const auto found = store.read_tokens().find_by_hash(hash);
  const auto now = store.clock().now_unix_ms();
  if (!found || found->expired(now)) return std::nullopt;
  if (!found->last_used || now - *found->last_used >= 60'000)
    store.tokens().touch_unless_busy(found->id);
  auto user = store.read_users().get(found->user_id);
  if (!user || user->disabled) return std::nullopt;
  if (expires_at) *expires_at = found->expires_at;
  return user;
}

std::string issue_token(store::Store& store, std::int64_t user_id, std::string_view name,
                        std::optional<std::int64_t> expires_at) {
  auto token = new_token();
  store.tokens().create(user_id, token_hash(token), name, expires_at);
  return token;
}

}  // namespace bowline::api
