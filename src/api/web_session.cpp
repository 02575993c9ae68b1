#include "api/web_session.hpp"

#include <sodium.h>

#include <algorithm>

#include "api/address_prefix.hpp"
#include "api/auth.hpp"
#include "util/strings.hpp"

namespace bowline::api {

namespace {

// The address without the port ("127.0.0.1:5555" -> "127.0.0.1", "[::1]:5" -> "[::1]").
std::string host_of(const std::string& remote) {
  const auto colon = remote.rfind(':');
  return colon == std::string::npos ? remote : remote.substr(0, colon);
}

// Longer than any username can be (routes_users: 32): refused before any bookkeeping.
constexpr std::size_t kLongestUsername = 32;

}  // namespace

std::string cookie_value(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    const auto semi = header.find(';');
    auto part = util::trim(header.substr(0, semi));
    header = semi == std::string_view::npos ? std::string_view() : header.substr(semi + 1);
    const auto eq = part.find('=');
    if (eq == std::string::npos) continue;
    if (util::trim(part.substr(0, eq)) == name) return std::string(util::trim(part.substr(eq + 1)));
  }
  return {};
}

bool same_secret(std::string_view a, std::string_view b) {
  if (a.size() != b.size() || a.empty()) return false;
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

WebSessions::WebSessions(store::Store& store, SessionOptions options)
    : store_(store),
      options_(options),
      limiter_(LoginLimits{options.free_failures, options.first_lockout, options.max_lockout,
                           options.free_account_failures, options.max_account_pause}),
      gate_(options.hash_slots, options.hash_waiting, options.hash_patience),
      dummy_hash_(hash_password(new_token())) {}

std::shared_ptr<PendingLogin> WebSessions::begin_login(std::string_view username,
                                                       const Request& request) {
  if (username.size() > kLongestUsername) throw HttpError(401, "wrong username or password");
  const auto address = address_prefix(client_address(request, options_.trusted_proxies));
  auto pending = std::make_shared<PendingLogin>();
  pending->username = util::to_lower(std::string(username));
  pending->attempt = limiter_.begin(pending->username, address, store_.clock().now_unix_ms());
  pending->ticket = gate_.enter("address:" + address);
  return pending;
}

SessionLogin WebSessions::finish_login(PendingLogin& pending, std::string_view password) {
  // The place at the gate and the attempt's count end with this call, before the answer is
  // out: the client's next try must not find them still held.
  struct Done {
    PendingLogin& pending;
    ~Done() {
      pending.ticket.reset();
      pending.attempt.reset();
    }
  } done{pending};
  auto user = store_.users().find_by_username(pending.username);
  const bool has_password = user && !user->password_hash.empty();
  // An unknown user costs the same argon2id verification as a known one.
  const bool ok = gate_.run(*pending.ticket, [&] {
    return verify_password(has_password ? user->password_hash : dummy_hash_, password);
  }) && has_password;
  pending.ticket.reset();  // the slot goes to the next in line
  if (!ok) {
    limiter_.failed(*pending.attempt, store_.clock().now_unix_ms());
    throw HttpError(401, "wrong username or password");
  }
  limiter_.succeeded(*pending.attempt, store_.clock().now_unix_ms());
  // Said only to someone who knows the password: it tells a guesser nothing.
  if (user->disabled) throw HttpError(403, "the account " + user->username + " is disabled");
  SessionLogin out{*user, new_token(), new_token()};
  store_.sessions().create(user->id, token_hash(out.cookie), out.csrf,
                           store_.clock().now_unix_ms() + options_.absolute.count());
  return out;
}

SessionLogin WebSessions::open(const store::User& user) {
  if (user.disabled) throw HttpError(403, "the account " + user.username + " is disabled");
  SessionLogin out{user, new_token(), new_token()};
  store_.sessions().create(user.id, token_hash(out.cookie), out.csrf,
                           store_.clock().now_unix_ms() + options_.absolute.count());
  return out;
}

std::string WebSessions::hash(std::string_view password, const Request& request) {
  const auto address = address_prefix(client_address(request, options_.trusted_proxies));
  const auto ticket = gate_.enter("address:" + address);
  return gate_.run(*ticket, [&] { return hash_password(password); });
}

bool WebSessions::verify_current(const store::User& user, std::string_view password,
                                 const Request& request) {
  const auto address = address_prefix(client_address(request, options_.trusted_proxies));
  const auto attempt = limiter_.begin(user.username, address, store_.clock().now_unix_ms());
  const auto ticket = gate_.enter("address:" + address);
  const bool ok = gate_.run(*ticket, [&] { return verify_password(user.password_hash, password); });
  if (ok)
    limiter_.succeeded(*attempt, store_.clock().now_unix_ms());
  else
    limiter_.failed(*attempt, store_.clock().now_unix_ms());
  return ok;
}

SessionLogin WebSessions::login(std::string_view username, std::string_view password,
                                const Request& request) {
  auto pending = begin_login(username, request);
  return finish_login(*pending, password);
}

std::string WebSessions::session_cookie(const Request& request) const {
  const auto header = request.header("cookie");
  auto secret = cookie_value(header, kSecureSessionCookie);
  // Where the cookie is always Secure, a plain one can only be someone else's doing.
  if (secret.empty() && !request.tls && options_.secure_cookie != true)
    secret = cookie_value(header, kSessionCookie);
  return secret;
}

std::optional<WebSessions::Found> WebSessions::find(const Request& request) {
  const auto cookie = session_cookie(request);
  if (cookie.size() != 64 || cookie.find_first_not_of("0123456789abcdef") != std::string::npos)
    return std::nullopt;
  auto session = store_.sessions().use(token_hash(cookie), options_.idle.count());
  if (!session) return std::nullopt;
  auto user = store_.users().get(session->user_id);
  if (!user || user->disabled) return std::nullopt;
  return Found{std::move(*user), std::move(*session)};
}

void WebSessions::logout(const Request& request) {
  const auto cookie = session_cookie(request);
  if (!cookie.empty()) store_.sessions().remove_by_hash(token_hash(cookie));
}

std::string client_address(const Request& request,
                           const std::vector<spec::Ipv4Network>& trusted_proxies) {
  const auto trusted = [&](const std::string& text) {
    const auto ip = spec::Ipv4Address::parse(text);
    return ip && std::any_of(trusted_proxies.begin(), trusted_proxies.end(),
                             [&](const auto& net) { return net.contains(*ip); });
  };
  auto address = host_of(request.remote);
  if (!trusted(address)) return address;
  // Each proxy appends the address it saw: from the right, the first that is not a proxy.
  const auto hops = util::split(request.header("x-forwarded-for"), ',');
  for (auto it = hops.rbegin(); it != hops.rend(); ++it) {
    const auto hop = std::string(util::trim(*it));
    if (hop.empty()) continue;
    if (!trusted(hop)) return hop.size() <= 45 ? hop : address;  // no address is longer
    address = hop;
  }
  return address;
}

bool served_over_https(const Request& request) {
  if (request.tls) return true;
  // The first hop's value: a proxy chain appends, so the browser-facing one comes first.
  auto first = [](std::string value) {
    value = value.substr(0, value.find(','));
    return util::to_lower(util::trim(value));
  };
  if (first(request.header("x-forwarded-proto")) == "https") return true;
  const auto forwarded = first(request.header("forwarded"));
  for (std::size_t at = 0; at < forwarded.size();) {
    const auto end = std::min(forwarded.find(';', at), forwarded.size());
    auto pair = util::trim(forwarded.substr(at, end - at));
    if (pair == "proto=https" || pair == "proto=\"https\"") return true;
    at = end + 1;
  }
  return util::to_lower(request.header("origin")).rfind("https://", 0) == 0;
}

bool WebSessions::secure(const Request& request) const {
  // Over bowline's own HTTPS always: the cookie must never go back over plain HTTP.
  return request.tls ||
         (options_.secure_cookie ? *options_.secure_cookie : served_over_https(request));
}

std::string WebSessions::set_cookie(const std::string& value, const Request& request) const {
  if (secure(request))
    return std::string(kSecureSessionCookie) + "=" + value +
           "; HttpOnly; SameSite=Strict; Path=/; Secure";
  return std::string(kSessionCookie) + "=" + value + "; HttpOnly; SameSite=Strict; Path=/";
}

std::string WebSessions::clear_cookie(const Request& request) const {
  if (secure(request))
    return std::string(kSecureSessionCookie) +
           "=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0; Secure";
  return std::string(kSessionCookie) + "=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0";
}

}  // namespace bowline::api
