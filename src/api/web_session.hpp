// Browser logins: the session cookie (HttpOnly, SameSite=Strict, and __Host- with Secure over
// HTTPS; only its SHA-256 is stored), the CSRF token a browser echoes in X-CSRF-Token on
// state-changing requests, and a limiter that slows password guessing down.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/http.hpp"
#include "api/login_limiter.hpp"
#include "api/password_gate.hpp"
#include "spec/ipv4.hpp"
#include "store/store.hpp"

namespace bowline::api {

inline constexpr const char* kSessionCookie = "bowline_session";
// The name whenever the cookie is Secure: a browser takes a __Host- cookie only from an HTTPS
// page and only without Domain, so it is this host's alone, and no plain-HTTP page (nor a
// service on another port of the host, over plain HTTP) can set one in its place.
inline constexpr const char* kSecureSessionCookie = "__Host-bowline_session";

struct SessionOptions {
  std::chrono::milliseconds idle{std::chrono::hours(12)};
  std::chrono::milliseconds absolute{std::chrono::hours(7 * 24)};
  // The cookie's Secure attribute: always (true), never (false), or (nullopt) when the
  // browser reached us over HTTPS, which a TLS front end reports (served_over_https). Over
  // bowline's own HTTPS (Request::tls) it is Secure whatever this says.
  std::optional<bool> secure_cookie;
  // Failed logins per client address, and per username from one address, before further
  // attempts from there are refused for a while (the pause doubles with each further failure,
  // up to `max_lockout`). A username is never locked for every address: a guesser elsewhere
  // cannot lock its owner out.
  int free_failures = 5;
  std::chrono::milliseconds first_lockout{std::chrono::seconds(1)};
  std::chrono::milliseconds max_lockout{std::chrono::minutes(15)};
  // Failed logins of one account from anywhere before its tries are paced (login_limiter.hpp:
  // slowed down, never locked out; not from an address it logged in from lately).
  int free_account_failures = 20;
  std::chrono::milliseconds max_account_pause{std::chrono::seconds(30)};
  // Password checks at once (argon2id takes 64 MiB each), how many may wait for one, and for
  // how long (password_gate.hpp).
  int hash_slots = 2;
  std::size_t hash_waiting = 16;
  std::chrono::milliseconds hash_patience{std::chrono::seconds(5)};
  // Peers whose X-Forwarded-For is believed (reverse proxies, server.trusted_proxies); from
  // anyone else the header is ignored, so a client cannot pose as another address.
  std::vector<spec::Ipv4Network> trusted_proxies;
};

// The address a login is counted against: the peer's, or, when the peer is a trusted proxy,
// the last address in X-Forwarded-For that is not one (the one the proxies saw).
std::string client_address(const Request& request,
                           const std::vector<spec::Ipv4Network>& trusted_proxies);

// The value of cookie `name` in a Cookie header; "" when absent.
std::string cookie_value(std::string_view cookie_header, std::string_view name);

// Whether the browser sent `request` over HTTPS: to bowline itself (Request::tls), or to a TLS
// front end (reverse proxy) that passes it to us over HTTP, as the proxy's X-Forwarded-Proto
// or Forwarded proto= or the page's own Origin say. Only used to add Secure: a client that claims
// HTTPS falsely gets a cookie its browser then keeps off plain HTTP, which harms nobody else.
bool served_over_https(const Request& request);

// Constant-time comparison (CSRF tokens).
bool same_secret(std::string_view a, std::string_view b);

struct SessionLogin {
  store::User user;
  std::string cookie;  // the secret, for Set-Cookie (never stored)
  std::string csrf;
};

// A login between its two steps (WebSessions::begin_login, finish_login).
struct PendingLogin {
  std::string username;
  std::shared_ptr<LoginLimiter::Attempt> attempt;
  std::shared_ptr<PasswordGate::Ticket> ticket;
};

class WebSessions {
 public:
  WebSessions(store::Store& store, SessionOptions options);

  // A login in two steps. begin_login does what costs nothing, on an HTTP worker: HttpError 401
  // for a username longer than any, 429 with Retry-After while the limits say wait
  // (login_limiter.hpp) or the password gate's line is full (password_gate.hpp). finish_login
  // waits for its turn at the gate and checks the password (off the workers): 401 (one message
  // for every wrong username or password), 429 when the turn did not come in time. `request`
  // gives the client's address (client_address).
  std::shared_ptr<PendingLogin> begin_login(std::string_view username, const Request& request);
  SessionLogin finish_login(PendingLogin& pending, std::string_view password);
  SessionLogin login(std::string_view username, std::string_view password, const Request& request);
  // A session for a user someone else vouched for (single sign-on): no password, same cookie.
  SessionLogin open(const store::User& user);
  // The gate every password check and hash goes through.
  PasswordGate& password_gate() { return gate_; }
  // Outside a login, for the request's client: a password's hash (a new user, a new password),
  // and the check of `user`'s current password before a change, which counts as a login of
  // that account (a wrong one slows the next, 429 while the limits say wait). Both through the
  // gate, so that no route runs argon2id more often than logins may.
  std::string hash(std::string_view password, const Request& request);
  bool verify_current(const store::User& user, std::string_view password, const Request& request);
  // The session of the request's cookie with its user; nullopt without a live one.
  struct Found {
    store::User user;
    store::WebSession session;
  };
  std::optional<Found> find(const Request& request);
  void logout(const Request& request);

  // Set-Cookie values for the answer to `request` (it decides Secure in the automatic mode).
  std::string set_cookie(const std::string& value, const Request& request) const;
  std::string clear_cookie(const Request& request) const;

 private:
  bool secure(const Request& request) const;
  // The secret of the request's session cookie: the __Host- one, or the plain one where
  // cookies are not Secure (plain HTTP, no TLS front end); "" when there is none.
  std::string session_cookie(const Request& request) const;

  store::Store& store_;
  SessionOptions options_;
  LoginLimiter limiter_;
  PasswordGate gate_;
  std::string dummy_hash_;  // verified against for unknown users, so timing says nothing
};

}  // namespace bowline::api
