// /api/v1/whoami and /api/v1/users: accounts, their quotas, SSH keys and API tokens.
#include <algorithm>
#include <cctype>

#include "api/api.hpp"
#include "api/auth.hpp"
#include "api/body.hpp"
#include "api/json.hpp"
#include "engine/quota.hpp"
#include "spec/validators.hpp"
#include "util/control_chars.hpp"
#include "util/duration.hpp"
#include "util/sha512_crypt.hpp"
#include "util/strings.hpp"

namespace bowline::api {

namespace {

// A username becomes the guest's login and part of domain names: a short DNS-safe word.
void check_username(const std::string& name) {
  const bool ok = !name.empty() && name.size() <= 32 &&
                  std::islower(static_cast<unsigned char>(name.front())) && name.back() != '-' &&
                  std::all_of(name.begin(), name.end(), [](unsigned char c) {
                    return std::islower(c) || std::isdigit(c) || c == '-';
                  });
  if (!ok)
    throw HttpError(422, "username \"" + name +
                             "\": use 1 to 32 lower-case letters, digits and '-', starting with "
                             "a letter and not ending with '-'");
}

// RFC 5321's longest path: nobody's address is longer, and a longer one is not repeated back.
constexpr std::size_t kLongestEmail = 254;
// The longest IANA zone name has 32 characters.
constexpr std::size_t kLongestTimezone = 64;

// Letters, digits and ._%+- before the '@', DNS labels after it: what addresses people use.
// Templates paste the address into cloud-init documents and scripts, so nothing a shell, YAML
// or a mail header reads specially ($ ` ' " ; | & < > spaces, line breaks) and nothing that
// looks like another letter (homoglyphs, invisible characters) is taken.
bool is_plain_email(const std::string& email) {
  const auto at = email.find('@');
  if (at == std::string::npos || at == 0 || at > 64 || email.find('@', at + 1) != std::string::npos)
    return false;
  const auto local_ok = [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
  };
  if (!std::all_of(email.begin(), email.begin() + static_cast<long>(at), local_ok)) return false;
  const auto domain = email.substr(at + 1);
  if (domain.empty()) return false;
  for (const auto& label : util::split(domain, '.')) {
    if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-')
      return false;
    if (!std::all_of(label.begin(), label.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '-'; }))
      return false;
  }
  return true;
}

void check_email(const std::string& email) {
  if (email.size() > kLongestEmail)
    throw HttpError(422, "email: at most " + std::to_string(kLongestEmail) + " characters");
  if (email.empty()) return;
  if (util::has_invisible_characters(email))
    throw HttpError(422,
                    "email: an e-mail address holds no invisible characters (zero-width, "
                    "direction marks)");
  if (!is_plain_email(email))
    throw HttpError(422,
                    "email: not an address bowline takes: letters, digits and . _ % + - before "
                    "the @, a domain name after it");
}

void check_timezone(const std::string& tz) {
  const bool ok =
      tz.size() <= kLongestTimezone && std::all_of(tz.begin(), tz.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '/' || c == '_' || c == '-' || c == '+';
      });
  if (!ok || tz.find("..") != std::string::npos || (!tz.empty() && tz.front() == '/'))
    throw HttpError(422, "timezone \"" + tz.substr(0, kLongestTimezone) +
                             "\" is not a zone name such as Europe/Berlin");
}

void check_password(const std::string& password) {
  if (password.size() < 8) throw HttpError(422, "a password needs at least 8 characters");
  if (password.size() > 1024) throw HttpError(422, "a password may have at most 1024 characters");
}

void check_service_password(const std::string& password) {
  if (password.empty()) throw HttpError(422, "the service password is empty");
  if (password.find_first_of("\r\n") != std::string::npos || password.size() > 256)
    throw HttpError(422, "the service password must be one line of at most 256 characters");
}

// "TYPE BASE64 [COMMENT]" by spec's rule (the one template keys pass), without an options
// field; returned trimmed.
std::string check_ssh_key(const std::string& text) {
  auto key = util::trim(text);
  if (!spec::check_ssh_public_key(key, /*allow_options=*/false).empty())
    throw HttpError(
        422, "not an OpenSSH public key (expected \"ssh-ed25519 AAAA... comment\", one line)");
  return key;
}

std::set<store::Permission> parse_permissions(const std::vector<std::string>& names) {
  std::set<store::Permission> out;
  for (const auto& name : names) {
    auto p = store::parse_permission(name);
    if (!p)
      throw HttpError(
          422, "unknown permission \"" + name + "\" (known: " + store::permission_names() + ")");
    out.insert(*p);
  }
  return out;
}

// The body of POST /users as a new account, each field checked in turn; its password hashed
// through the sessions' gate for the request's client.
store::NewUser new_user_from(const nlohmann::json& body, WebSessions& sessions,
                             const Request& request) {
  store::NewUser fresh;
  fresh.username = required_string(body, "username");
  check_username(fresh.username);
  fresh.email = string_field(body, "email").value_or("");
  check_email(fresh.email);
  fresh.timezone = string_field(body, "timezone").value_or("");
  check_timezone(fresh.timezone);
  if (auto password = string_field(body, "password")) {
    check_password(*password);
    fresh.password_hash = sessions.hash(*password, request);
  }
  if (auto service = string_field(body, "servicePassword")) {
    check_service_password(*service);
    fresh.service_password_hash = util::sha512_crypt(*service, util::random_crypt_salt());
  }
  for (auto& key : string_list_field(body, "sshKeys").value_or(std::vector<std::string>{})) {
    auto checked = check_ssh_key(key);
    if (std::find(fresh.ssh_keys.begin(), fresh.ssh_keys.end(), checked) == fresh.ssh_keys.end())
      fresh.ssh_keys.push_back(std::move(checked));
  }
  if (auto permissions = string_list_field(body, "permissions"))
    fresh.permissions = parse_permissions(*permissions);
  return fresh;
}

// What a PATCH /users/{username} changes that is not a field of store::User itself.
struct UserPatch {
  std::optional<std::set<store::Permission>> permissions;
  std::optional<std::string> password_hash;
  std::optional<bool> disabled;
  bool revoke_tokens = false;  // with a new password: every API token of the user goes too
};

// One's own password changes only with the current one, so a session left open on a shared
// machine cannot lock its owner out. An admin setting another user's password needs none. A
// wrong one counts as a failed login of the account: a stolen session is no way to guess it.
void check_current_password(const Caller& caller, const nlohmann::json& body,
                            const store::User& user, WebSessions& sessions,
                            const Request& request) {
  if (caller.user.id != user.id || user.password_hash.empty()) return;
  const auto current = string_field(body, "currentPassword");
  if (!current)
    throw HttpError(422, "changing your password needs your current one (currentPassword)");
  if (!sessions.verify_current(user, *current, request))
    throw HttpError(403, "the current password is not right");
}

// Checks the whole PATCH body before anything is written: sets the email, timezone and
// service password on `user` and returns the rest.
UserPatch read_user_patch(const Caller& caller, const nlohmann::json& body, store::User& user,
                          WebSessions& sessions, const Request& request) {
  UserPatch patch;
  if (auto names = string_list_field(body, "permissions")) {
    require_admin(caller);
    patch.permissions = parse_permissions(*names);
  }
  if (body.contains("disabled")) {
    require_admin(caller);
    if (!body["disabled"].is_boolean()) throw HttpError(422, "disabled: expected true or false");
    patch.disabled = body["disabled"].get<bool>();
    if (*patch.disabled && caller.user.id == user.id)
      throw HttpError(409, "you cannot disable your own account");
  }
  if (auto password = string_field(body, "password")) {
    check_password(*password);
    check_current_password(caller, body, user, sessions, request);
    patch.password_hash = sessions.hash(*password, request);
  }
  if (body.contains("revokeTokens")) {
    if (!body["revokeTokens"].is_boolean())
      throw HttpError(422, "revokeTokens: expected true or false");
    patch.revoke_tokens = body["revokeTokens"].get<bool>();
    if (patch.revoke_tokens && !patch.password_hash)
      throw HttpError(422, "revokeTokens goes with a new password (password)");
  }
  if (auto email = string_field(body, "email")) {
    check_email(*email);
    user.email = *email;
  }
  if (auto tz = string_field(body, "timezone")) {
    check_timezone(*tz);
    user.timezone = *tz;
  }
  if (body.contains("servicePassword")) {
    if (auto service = string_field(body, "servicePassword")) {
      check_service_password(*service);
      user.service_password_hash = util::sha512_crypt(*service, util::random_crypt_salt());
    } else {
      user.service_password_hash.reset();  // null: no service password any more
    }
  }
  return patch;
}

// HttpError 409 when `user` is the last enabled admin, whom a change would take away.
void keep_an_admin(store::Store& store, const store::User& user) {
  if (!user.has(store::Permission::Admin) || user.disabled) return;
  const auto users = store.users().list();
  const auto admins = std::count_if(users.begin(), users.end(), [](const auto& u) {
    return u.has(store::Permission::Admin) && !u.disabled;
  });
  if (admins <= 1) throw HttpError(409, user.username + " is the last admin");
}

void keep_an_admin(store::Store& store, const store::User& user, const UserPatch& patch) {
  const bool loses_admin = patch.permissions && !patch.permissions->count(store::Permission::Admin);
  if (loses_admin || (patch.disabled && *patch.disabled)) keep_an_admin(store, user);
}

// Writes the patched user in one transaction, after the last-admin check inside it. A new
// password ends the user's other browser sessions, disabling ends all of them (open sockets
// follow within a second: SocketWatch).
void save_user_patch(store::Store& store, const Caller& caller, store::User& user,
                     const UserPatch& patch) {
  auto transaction = store.transaction();
  keep_an_admin(store, user, patch);
  if (patch.permissions) user.permissions = *patch.permissions;
  store.users().update(user);
  if (patch.password_hash) {
    store.users().set_password_hash(user.id, *patch.password_hash);
    store.sessions().remove_for_user(user.id,
                                     caller.user.id == user.id ? caller.session_id : std::nullopt);
    if (patch.revoke_tokens) store.tokens().remove_for_user(user.id);
  }
  if (patch.disabled) {
    store.users().set_disabled(user.id, *patch.disabled);
    if (*patch.disabled) store.sessions().remove_for_user(user.id);
  }
  transaction.commit();
}

// The user's token named by `ref`: its id, else its name (unique among the user's tokens).
store::ApiToken find_token(store::Store& store, const store::User& user, const std::string& ref) {
  const auto tokens = store.tokens().list_for_user(user.id);
  const bool numeric =
      !ref.empty() && ref.size() < 19 && ref.find_first_not_of("0123456789") == std::string::npos;
  std::vector<store::ApiToken> named;
  for (const auto& t : tokens) {
    if (numeric && t.id == std::stoll(ref)) return t;
    if (t.name == ref) named.push_back(t);
  }
  if (named.size() == 1) return named.front();
  if (named.empty()) throw HttpError(404, user.username + " has no token with id or name " + ref);
  std::string ids;
  for (const auto& t : named) ids += (ids.empty() ? "" : ", ") + std::to_string(t.id);
  throw HttpError(409, user.username + " has " + std::to_string(named.size()) + " tokens named " +
                           ref + " (ids " + ids + "): name one by its id");
}

// "expires": a duration such as "30d"; none: the token lasts until it is revoked. Never later
// than the caller's own credential (a token that expires in an hour cannot make one that
// lives for ever).
std::optional<std::int64_t> token_expiry(const nlohmann::json& body, std::int64_t now,
                                         const Caller& caller) {
  std::optional<std::int64_t> asked;
  if (const auto text = string_field(body, "expires")) {
    const auto duration = util::parse_duration(*text);
    if (!duration)
      throw HttpError(422,
                      "expires: \"" + *text +
                          "\" is not a duration such as 90m, 12h, 30d or 2w (at most ten years)");
    asked = now + std::chrono::duration_cast<std::chrono::milliseconds>(*duration).count();
  }
  if (caller.expires_at && (!asked || *asked > *caller.expires_at)) return caller.expires_at;
  return asked;
}

// The spaces a user owns, by name, for a refusal to delete the user.
std::string owned_spaces(store::Store& store, const store::User& user) {
  std::string names;
  int count = 0;
  for (const auto& space : store.spaces().list())
    if (space.owner_id == user.id) {
      if (++count <= 10) names += (names.empty() ? "" : ", ") + space.name;
    }
  if (count > 10) names += " and " + std::to_string(count - 10) + " more";
  return count == 0 ? "" : names;
}

// One limit of PATCH /users/{username}/quota: null or "default" (the server's), "unlimited",
// a whole number (for memory and disk: bytes) or, as text, a count or a size ("8G").
std::optional<std::int64_t> limit_from(const nlohmann::json& value, const char* name, bool bytes) {
  if (value.is_null()) return std::nullopt;
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0) return value.get<std::int64_t>();
  if (!value.is_string())
    throw HttpError(422, std::string("quota ") + name +
                             ": expected a whole number of at least 0, a text such as " +
                             (bytes ? "\"8G\"" : "\"4\"") + ", \"unlimited\" or \"default\"");
  const auto text = value.get<std::string>();
  if (text == "default") return std::nullopt;
  const auto parsed = engine::parse_limit(text, bytes);
  if (const auto* error = std::get_if<std::string>(&parsed))
    throw HttpError(422, std::string("quota ") + name + ": " + *error + " or default");
  return std::get<std::int64_t>(parsed);
}

// The user's quota with the body's fields applied; fields it does not name stay as they are.
store::Quota patched_quota(const nlohmann::json& body, store::Quota quota) {
  struct Field {
    const char* name;
    std::optional<std::int64_t> store::Quota::*member;
    bool bytes;
  };
  static const Field fields[] = {{"spaces", &store::Quota::spaces, false},
                                 {"cpus", &store::Quota::cpus, false},
                                 {"memory", &store::Quota::memory, true},
                                 {"disk", &store::Quota::disk, true}};
  for (const auto& [key, value] : body.items())
    if (std::none_of(std::begin(fields), std::end(fields),
                     [&](const Field& f) { return key == f.name; }))
      throw HttpError(422,
                      "quota: unknown field \"" + key + "\" (known: spaces, cpus, memory, disk)");
  for (const auto& f : fields)
    if (body.contains(f.name)) quota.*(f.member) = limit_from(body[f.name], f.name, f.bytes);
  return quota;
}

}  // namespace

nlohmann::json Api::user_with_quota(const store::User& user) {
  auto out = user_json(user);
  add_quota_json(out, engine_.limits_of(user), engine_.usage_of_owner(user.id));
  return out;
}

void Api::add_user_routes() {
  router_.add("GET", "/api/v1/whoami", Access::Any, [this](const Caller& caller, const Request&) {
    return Response::json(200, user_with_quota(caller.user));
  });

  router_.add("GET", "/api/v1/users", Access::Admin, [this](const Caller&, const Request&) {
    auto out = nlohmann::json::array();
    const auto usage = engine_.usage_by_owner();  // one pass over the spaces, not one per user
    for (const auto& user : store_.users().list()) {
      auto one = user_json(user);
      const auto it = usage.find(user.id);
      add_quota_json(one, engine_.limits_of(user),
                     it == usage.end() ? engine::Usage{} : it->second);
      out.push_back(std::move(one));
    }
    return Response::json(200, out);
  });

  router_.add("POST", "/api/v1/users", Access::Admin,
              [this](const Caller& caller, const Request& request) {
                const auto fresh = new_user_from(object_body(request), sessions_, request);
                std::string token;
                store::User user;
                {
                  auto transaction = store_.transaction();
                  user = store_.users().create(fresh);
                  // No longer than the admin's own token, if it expires.
                  token = issue_token(store_, user.id, "first token", caller.expires_at);
                  transaction.commit();
                }
                auto out = user_json(user);
                out["token"] = token;
                return Response::json(201, out);
              });

  router_.add("GET", "/api/v1/users/{username}", Access::AdminOrSelf,
              [this](const Caller& caller, const Request& request) {
                return Response::json(
                    200, user_with_quota(target_user(caller, request.param("username"))));
              });

  router_.add("PATCH", "/api/v1/users/{username}", Access::AdminOrSelf,
              [this](const Caller& caller, const Request& request) {
                auto user = target_user(caller, request.param("username"));
                const auto patch =
                    read_user_patch(caller, object_body(request), user, sessions_, request);
                save_user_patch(store_, caller, user, patch);
                return Response::json(200, user_with_quota(*store_.users().get(user.id)));
              });

  add_user_delete_route();

  add_user_quota_route();
  add_user_credential_routes();
}

// Admins only; never oneself, never the last admin, never while the user owns spaces (unless
// they are handed over first) or disks.
void Api::add_user_delete_route() {
  router_.add(
      "DELETE", "/api/v1/users/{username}", Access::Admin,
      [this](const Caller& caller, const Request& request) {
        auto user = target_user(caller, request.param("username"));
        if (user.id == caller.user.id) throw HttpError(409, "you cannot delete your own account");
        // Disks are data of their own: never deleted along with an account.
        const auto refuse_while_disks = [this](const store::User& owner) {
          if (const auto disks = engine_.list_disks(owner.id); !disks.empty())
            throw HttpError(409, owner.username + " still owns " + std::to_string(disks.size()) +
                                     " disk(s), the first " + disks.front().disk.name +
                                     ": delete them first (bowline disk delete NAME "
                                     "--owner " +
                                     owner.username + ")");
        };
        // ?transfer_to=OTHER hands the spaces over first, all or none (the engine's
        // own transaction): checked here before, so a refused delete moves nothing.
        const auto to = request.query.find("transfer_to");
        if (to != request.query.end()) {
          keep_an_admin(store_, user);
          // Disks are not handed over (a disk's owner decides where it goes): checked
          // first so the delete cannot stop after the spaces moved.
          refuse_while_disks(user);
          const auto heir = store_.users().find_by_username(to->second);
          if (!heir) throw HttpError(404, "no user named '" + to->second + "' to transfer to");
          if (heir->id == user.id) throw HttpError(400, "transfer_to names the user being deleted");
          if (heir->disabled)
            throw HttpError(409, heir->username + " is disabled: enable them first");
          engine_.transfer_spaces(user.id, heir->id);
        }
        auto transaction = store_.transaction();
        keep_an_admin(store_, user);
        if (const auto owned = owned_spaces(store_, user); !owned.empty())
          throw HttpError(409, user.username + " still owns spaces (" + owned +
                                   "): delete them first (bowline user delete " + user.username +
                                   " --delete-spaces does) or hand them over "
                                   "(--transfer-to OTHER)");
        refuse_while_disks(user);
        store_.users().remove(user.id);  // tokens and sessions go with the account
        transaction.commit();
        owners_.forget_owner(user.id);
        return Response::no_content();
      });
}

// Admins only, so that nobody raises their own. A quota lower than what the user holds deletes
// nothing; it refuses their next create or claim.
void Api::add_user_quota_route() {
  router_.add("PATCH", "/api/v1/users/{username}/quota", Access::Admin,
              [this](const Caller& caller, const Request& request) {
                const auto body = object_body(request);
                auto transaction = store_.transaction();  // two patches never lose a field
                const auto user = target_user(caller, request.param("username"));
                store_.users().set_quota(user.id, patched_quota(body, user.quota));
                transaction.commit();
                return Response::json(200, user_with_quota(*store_.users().get(user.id)));
              });
}

// A user's SSH keys and API tokens.
void Api::add_user_credential_routes() {
  router_.add("POST", "/api/v1/users/{username}/keys", Access::AdminOrSelf,
              [this](const Caller& caller, const Request& request) {
                auto user = target_user(caller, request.param("username"));
                const auto key = check_ssh_key(required_string(object_body(request), "key"));
                store_.users().add_ssh_key(user.id, key);  // adding a key it has changes nothing
                return Response::json(200, user_json(*store_.users().get(user.id)));
              });

  router_.add("DELETE", "/api/v1/users/{username}/keys", Access::AdminOrSelf,
              [this](const Caller& caller, const Request& request) {
                auto user = target_user(caller, request.param("username"));
                auto key = required_string(object_body(request), "key");
                while (!key.empty() && std::isspace(static_cast<unsigned char>(key.back())))
                  key.pop_back();
                if (!store_.users().remove_ssh_key(user.id, key))
                  throw HttpError(404, user.username + " has no such key");
                return Response::json(200, user_json(*store_.users().get(user.id)));
              });

  router_.add("GET", "/api/v1/users/{username}/tokens", Access::AdminOrSelf,
              [this](const Caller& caller, const Request& request) {
                auto user = target_user(caller, request.param("username"));
                auto out = nlohmann::json::array();
                for (const auto& t : store_.tokens().list_for_user(user.id))
                  out.push_back(token_json(t));
                return Response::json(200, out);
              });

  router_.add("POST", "/api/v1/users/{username}/tokens", Access::AdminOrSelf,
              [this](const Caller& caller, const Request& request) {
                auto user = target_user(caller, request.param("username"));
                const auto body = object_body(request);
                const auto name = required_string(body, "name");
                if (name.empty() || name.size() > 100 || util::has_control_characters(name))
                  throw HttpError(422, "a token name is 1 to 100 characters on one line");
                const auto expires = token_expiry(body, store_.clock().now_unix_ms(), caller);
                auto token = new_token();
                const auto made = store_.tokens().create(user.id, token_hash(token), name, expires);
                auto out = token_json(made);
                out["token"] = token;  // shown once: only its hash is kept
                return Response::json(201, out);
              });

  // Revoking is immediate: the next request with the token gets 401, and sockets it opened
  // close within a second (SocketWatch).
  router_.add("DELETE", "/api/v1/users/{username}/tokens/{token}", Access::AdminOrSelf,
              [this](const Caller& caller, const Request& request) {
                auto user = target_user(caller, request.param("username"));
                const auto token = find_token(store_, user, request.param("token"));
                store_.tokens().remove(token.id);
                return Response::json(200, token_json(token));
              });
}

}  // namespace bowline::api
