// Single sign-on (docs/teams.md): OpenID Connect logins for the web UI (the authorization code
// flow with PKCE, through GET /api/v1/sso/login and /callback) and for the CLI (the device
// authorization flow, through POST /api/v1/sso/device and /device/{id}). The server is the
// provider's client: it holds the client secret, and the browser or the CLI never see a
// provider token, only bowline's session cookie or an API token. Who the person is and what
// they may do: sso_users.hpp.
#include <atomic>
#include <map>
#include <mutex>

#include "api/api.hpp"
#include "api/auth.hpp"
#include "api/redirect.hpp"
#include "api/sso_users.hpp"
#include "sso/oidc.hpp"

namespace bowline::api {

namespace {

constexpr std::int64_t kLoginLifeMs = 10 * 60 * 1000;
constexpr std::size_t kMostPending = 1000;  // logins begun and not ended; more are refused
constexpr std::int64_t kCliTokenLifeMs = std::int64_t{30} * 24 * 3600 * 1000;

std::string sso_cookie(bool secure) {
  return secure ? "__Host-bowline_sso" : "bowline_sso";
}

}  // namespace

// Logins between their two steps, in memory: a restart asks people to start again.
struct SsoFlows {
  struct WebLogin {
    std::string nonce, verifier, next;
    std::int64_t expires = 0;
  };
  struct DeviceLogin {
    std::string device_code;
    int interval = 5;
    std::int64_t expires = 0, next_poll = 0;
  };
  std::mutex mutex;
  std::map<std::string, WebLogin> web;        // by state
  std::map<std::string, DeviceLogin> device;  // by bowline's id for it
  // Requests waiting on the provider, each on a thread of its own (Response::deferred): a
  // provider that hangs holds no HTTP worker, and anonymous callers hold at most this many.
  std::atomic<int> calling{0};
  static constexpr int kMostCalling = 16;

  // The answer of `body`, a call that waits on the provider; 503 when too many already wait.
  template <class Body>
  Response call(Body body) {
    struct Count {
      std::atomic<int>& n;
      ~Count() { --n; }
    } count{calling};
    if (++calling > kMostCalling)
      throw HttpError(503, "the identity provider is slow to answer: try again in a minute");
    return body();
  }

  void prune(std::int64_t now) {
    std::erase_if(web, [&](const auto& w) { return w.second.expires <= now; });
    std::erase_if(device, [&](const auto& d) { return d.second.expires <= now; });
    if (web.size() + device.size() >= kMostPending)
      throw HttpError(429, "too many single sign-on logins under way: try again in a minute");
  }
};

sso::OidcClient& Api::oidc() {
  if (!options_.sso.client)
    throw HttpError(404, "single sign-on is off on this server (server.sso.issuer)");
  return *options_.sso.client;
}

// The person is logged in: bowline's user for the claims, and the audit's word for it.
store::User Api::sso_login(const Request& request, const nlohmann::json& claims, const char* how) {
  store::AuditEntry entry;
  entry.peer = client_address(request, options_.sessions.trusted_proxies);
  entry.action = std::string("SSO login (") + how + ")";
  try {
    auto user = sso_user(store_, oidc().settings().issuer, claims, options_.sso.policy);
    entry.user_id = user.id;
    entry.username = user.username;
    entry.status = 200;
    audit_->record(entry);
    return user;
  } catch (const HttpError& e) {
    entry.username = claims.value("sub", "");
    entry.status = e.status();
    audit_->record(entry);
    throw;
  }
}

// The UI's origin, which the provider knows as the client's redirect URI.
std::string Api::sso_redirect_uri() const {
  return options_.preview.ui_origin + "/api/v1/sso/callback";
}

void Api::add_sso_routes() {
  sso_ = std::make_shared<SsoFlows>();
  router_.add("GET", "/api/v1/sso", Access::Public, [this](const Caller&, const Request&) {
    const bool on = options_.sso.client != nullptr;
    return Response::json(
        200, {{"enabled", on}, {"issuer", on ? oidc().settings().issuer : std::string()}});
  });
  add_sso_web_routes();
  add_sso_device_routes();
}

void Api::add_sso_web_routes() {
  router_.add(
      "GET", "/api/v1/sso/login", Access::Public, [this](const Caller&, const Request& request) {
        oidc();  // 404 at once when single sign-on is off
        return Response::deferred([this, request] {
          return guarded(request, [&] { return sso_->call([&] { return sso_begin(request); }); });
        });
      });
  router_.add("GET", "/api/v1/sso/callback", Access::Public,
              [this](const Caller&, const Request& request) {
                return Response::deferred([this, request] {
                  return guarded(request,
                                 [&] { return sso_->call([&] { return sso_callback(request); }); });
                });
              });
}

// The browser's way to the provider (its discovery is fetched once, here, if need be), with
// the state, nonce and PKCE verifier kept for its way back.
Response Api::sso_begin(const Request& request) {
  auto& client = oidc();
  const auto state = sso::random_text();
  const auto nonce = sso::random_text();
  auto [verifier, challenge] = sso::pkce_pair();
  const auto next = request.query.count("next") ? request.query.at("next") : "/";
  const auto now = store_.clock().now_unix_ms();
  {
    std::lock_guard lock(sso_->mutex);
    sso_->prune(now);
    sso_->web[state] = {nonce, verifier, local_path(next), now + kLoginLifeMs};
  }
  auto r = redirect_to(client.authorization_url(sso_redirect_uri(), state, nonce, challenge));
  const bool secure = sso_redirect_uri().rfind("https://", 0) == 0;
  // Lax: the provider's redirect back is a navigation from its site.
  r.headers.emplace_back("Set-Cookie", sso_cookie(secure) + "=" + state +
                                           "; Path=/; HttpOnly; SameSite=Lax; "
                                           "Max-Age=600" +
                                           (secure ? "; Secure" : ""));
  return r;
}

// Back from the provider: the code for tokens, the tokens for a person, a session for them.
// A failure lands on the UI's login form, which says why.
Response Api::sso_callback(const Request& request) {
  const auto get = [&](const char* key) {
    const auto it = request.query.find(key);
    return it == request.query.end() ? std::string() : it->second;
  };
  const bool secure = sso_redirect_uri().rfind("https://", 0) == 0;
  const auto state = get("state");
  SsoFlows::WebLogin login;
  {
    std::lock_guard lock(sso_->mutex);
    const auto it = sso_->web.find(state);
    if (!state.empty() && it != sso_->web.end()) {
      login = it->second;
      sso_->web.erase(it);
    }
  }
  auto fail = [&](const std::string& why) {
    auto r = redirect_to("/?sso_error=" + percent_encode(why));
    r.headers.emplace_back(
        "Set-Cookie", sso_cookie(secure) + "=; Path=/; Max-Age=0" + (secure ? "; Secure" : ""));
    return r;
  };
  if (login.verifier.empty() || login.expires <= store_.clock().now_unix_ms() ||
      !same_secret(cookie_value(request.header("cookie"), sso_cookie(secure)), state))
    return fail("this login did not start in this browser, or took longer than ten minutes");
  if (!get("error").empty())
    return fail("the identity provider said: " +
                (get("error_description").empty() ? get("error") : get("error_description")));
  try {
    auto& client = oidc();
    const auto tokens = client.exchange_code(get("code"), sso_redirect_uri(), login.verifier);
    const auto claims = client.identity(tokens, store_.clock().now_unix_ms() / 1000, login.nonce);
    const auto user = sso_login(request, claims, "web");
    const auto session = sessions_.open(user);
    auto r = redirect_to(login.next);
    r.headers.emplace_back("Set-Cookie", sessions_.set_cookie(session.cookie, request));
    r.headers.emplace_back(
        "Set-Cookie", sso_cookie(secure) + "=; Path=/; Max-Age=0" + (secure ? "; Secure" : ""));
    return r;
  } catch (const sso::OidcError& e) {
    return fail(e.what());
  } catch (const HttpError& e) {
    return fail(e.what());
  }
}

void Api::add_sso_device_routes() {
  router_.add("POST", "/api/v1/sso/device", Access::Public,
              [this](const Caller&, const Request& request) {
                return Response::deferred([this, request] {
                  return guarded(request, [&] {
                    return sso_->call([&] {
                      const auto start = oidc().start_device();
                      const auto id = new_token();
                      const auto now = store_.clock().now_unix_ms();
                      {
                        std::lock_guard lock(sso_->mutex);
                        sso_->prune(now);
                        sso_->device[id] = {start.device_code, start.interval,
                                            now + start.expires_in * 1000LL, now};
                      }
                      return Response::json(
                          200, {{"id", id},
                                {"userCode", start.user_code},
                                {"verificationUri", start.verification_uri},
                                {"verificationUriComplete", start.verification_uri_complete},
                                {"interval", start.interval},
                                {"expiresIn", start.expires_in}});
                    });
                  });
                });
              });
  router_.add("POST", "/api/v1/sso/device/{id}", Access::Public,
              [this](const Caller&, const Request& request) {
                return Response::deferred([this, request] {
                  return guarded(request, [&] {
                    return sso_->call([&] { return sso_device_poll(request); });
                  });
                });
              });
}

// The CLI asks whether the person has answered; once they have, it gets an API token of theirs.
Response Api::sso_device_poll(const Request& request) {
  const auto id = request.param("id");
  const auto now = store_.clock().now_unix_ms();
  SsoFlows::DeviceLogin login;
  {
    std::lock_guard lock(sso_->mutex);
    const auto it = sso_->device.find(id);
    if (it == sso_->device.end() || it->second.expires <= now)
      throw HttpError(404, "no device login " + id + " under way (it ended or expired)");
    if (it->second.next_poll > now)  // the provider's pace, whatever the client's
      return Response::json(202, {{"status", "pending"}, {"interval", it->second.interval}});
    it->second.next_poll = now + it->second.interval * 1000LL;
    login = it->second;
  }
  bool slow_down = false;
  std::optional<sso::Tokens> tokens;
  try {
    tokens = oidc().poll_device(login.device_code, slow_down);
  } catch (const sso::OidcError& e) {
    std::lock_guard lock(sso_->mutex);
    sso_->device.erase(id);
    throw HttpError(403, e.what());
  }
  if (!tokens) {
    std::lock_guard lock(sso_->mutex);
    if (auto it = sso_->device.find(id); it != sso_->device.end() && slow_down)
      it->second.interval += 5;
    return Response::json(
        202, {{"status", "pending"}, {"interval", login.interval + (slow_down ? 5 : 0)}});
  }
  {
    std::lock_guard lock(sso_->mutex);
    sso_->device.erase(id);
  }
  nlohmann::json claims;
  try {
    claims = oidc().identity(*tokens, now / 1000, "");
  } catch (const sso::OidcError& e) {
    throw HttpError(403, e.what());
  }
  const auto user = sso_login(request, claims, "CLI");
  const auto token = new_token();
  store_.tokens().create(user.id, token_hash(token), "bowline login --sso", now + kCliTokenLifeMs);
  return Response::json(200, {{"token", token}, {"username", user.username}});
}

}  // namespace bowline::api
