// Preview URLs (preview_names.hpp): a port a template marks for a preview is a web origin of
// its own under the preview domain, relayed into the guest. A browser without a pass for that
// host goes once through the UI's origin (GET /api/v1/preview/authorize), whose session says
// who it is; the host then sets its own cookie (preview_passes.hpp), so the UI's session never
// reaches a guest's page. Each connection is checked like a tunnel (the space, the port's
// visibility, running) and stays open only while those checks pass.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <set>

#include "api/api.hpp"
#include "api/auth.hpp"
#include "api/preview_names.hpp"
#include "api/redirect.hpp"
#include "api/space_roles.hpp"
#include "engine/engine_error.hpp"
#include "util/strings.hpp"

namespace bowline::api {

namespace {

constexpr const char* kLoginPath = "/.bowline/login";

std::string pass_cookie(bool secure) {
  return secure ? "__Host-bowline_preview" : "bowline_preview";
}
std::string state_cookie(bool secure) {
  return secure ? "__Host-bowline_preview_state" : "bowline_preview_state";
}

// Lax, not Strict: a link from a chat or the UI (another site) must carry the pass.
std::string set_cookie(const std::string& name, const std::string& value, bool secure,
                       int max_age) {
  return name + "=" + value +
         "; Path=/; HttpOnly; SameSite=Lax; Max-Age=" + std::to_string(max_age) +
         (secure ? "; Secure" : "");
}

Response page(int status, const std::string& text) {
  Response r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = text + "\n";
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

std::string host_of_request(const Request& request) {
  auto host = util::to_lower(request.header("host"));
  if (const auto colon = host.rfind(':');
      colon != std::string::npos && host.find(']') == std::string::npos)
    host.resize(colon);
  return host;
}

// The request's fields on their way to the guest: without bowline's cookies, and with the
// client's address and scheme as bowline saw them (never as the client claims them).
void rewrite_fields(HeaderFields& fields, const std::string& client, bool https) {
  const std::set<std::string> ours = {pass_cookie(true), pass_cookie(false), state_cookie(true),
                                      state_cookie(false)};
  HeaderFields out;
  for (auto& [name, value] : fields) {
    const auto lower = util::to_lower(name);
    if (lower == "forwarded" || lower.rfind("x-forwarded-", 0) == 0) continue;
    if (lower == "cookie") {
      std::string kept;
      for (const auto& part : util::split(value, ';')) {
        const auto cookie = util::trim(part);
        const auto name_end = cookie.find('=');
        if (ours.contains(std::string(cookie.substr(0, name_end)))) continue;
        kept += (kept.empty() ? "" : "; ") + std::string(cookie);
      }
      if (kept.empty()) continue;
      value = kept;
    }
    out.emplace_back(std::move(name), std::move(value));
  }
  out.emplace_back("X-Forwarded-For", client);
  out.emplace_back("X-Forwarded-Proto", https ? "https" : "http");
  fields = std::move(out);
}

}  // namespace

void Api::listening_on(std::uint16_t port) {
  auto& o = options_.preview;
  if (o.port != 0) return;
  o.port = port;
  if (const auto end = o.ui_origin.rfind(":0");
      end != std::string::npos && end + 2 == o.ui_origin.size())
    o.ui_origin.replace(end + 1, 1, std::to_string(port));
}

bool Api::is_preview_request(const Request& request) const {
  return is_preview_host(options_.preview, host_of_request(request));
}

// The space and port a preview host names, when the caller may open it: any logged-in user
// for a team port, the owner, admins and those it is shared with for a private one. 404 for
// anything else (a private preview's existence is not told to strangers).
Api::PreviewHit Api::preview_space(const Caller& caller, const std::string& host) {
  for (const auto& target : preview_targets(options_.preview, host)) {
    const auto owner = store_.users().find_by_username(target.owner);
    if (!owner) continue;
    const auto space = store_.spaces().find_by_name(owner->id, target.space);
    if (!space) continue;
    const bool member = holds(store_, caller, *space, store::ShareRole::Viewer);
    for (const auto& port : engine_.space_spec(*space).ports) {
      if (port.port != target.port || port.preview == spec::Preview::None) continue;
      if (port.preview == spec::Preview::Team || member) return {*space, port};
    }
    if (member)
      throw HttpError(404, "port " + std::to_string(target.port) + " of " + space->name +
                               " has no preview: its template marks a port for one with http: "
                               "true or preview: private|team");
  }
  throw HttpError(404, "no preview at " + host + " that you may open");
}

// The UI's origin: the session says who the browser is; a code for the preview host follows.
void Api::add_preview_routes() {
  router_.add("GET", "/api/v1/preview/authorize", Access::Public,
              [this](const Caller&, const Request& request) {
                if (!options_.preview.enabled())
                  throw HttpError(404, "previews are off on this server (server.preview.domain)");
                const auto get = [&](const char* key) {
                  const auto it = request.query.find(key);
                  return it == request.query.end() ? std::string() : it->second;
                };
                const auto host = util::to_lower(get("host"));
                if (!is_preview_host(options_.preview, host))
                  throw HttpError(400, "\"" + host + "\" is not a preview host");
                auto found = sessions_.find(request);
                // Not logged in here (or the cookie stayed behind, SameSite=Strict, on a
                // redirect from another site): the UI continues once it knows the session.
                if (!found) return redirect_to("/?preview=" + percent_encode(request.target));
                Caller caller;
                caller.user = found->user;
                caller.by_session = true;
                preview_space(caller, host);  // refusals are told here, on the UI's origin
                const auto code = previews_.issue(
                    {found->user.id, host, found->session.cookie_sha256}, get("state"));
                const auto base = preview_origin(host);
                return redirect_to(base + kLoginPath + "?code=" + code +
                                   "&path=" + percent_encode(local_path(get("path"))));
              });
}

std::string Api::preview_origin(const std::string& host) const {
  const auto& o = options_.preview;
  const bool default_port = o.port == (o.https ? 443 : 80);
  return std::string(o.https ? "https://" : "http://") + host +
         (default_port ? "" : ":" + std::to_string(o.port));
}

// A request to a preview host: its own login path, a trip to the UI for a pass, or the relay.
Response Api::preview(Request& request) {
  const auto host = host_of_request(request);
  const bool secure = options_.preview.https;
  const auto cookies = request.header("cookie");
  if (request.path == kLoginPath) {
    const auto code = request.query.count("code") ? request.query.at("code") : "";
    const auto pass = previews_.redeem(code, host, cookie_value(cookies, state_cookie(secure)));
    if (!pass)
      return page(403,
                  "This preview login link is not good any more (used, older than a minute, or "
                  "opened in another browser). Open the preview's address again.");
    auto r = redirect_to(local_path(request.query.count("path") ? request.query.at("path") : "/"));
    r.headers.emplace_back("Set-Cookie", set_cookie(pass_cookie(secure), *pass, secure, 43200));
    r.headers.emplace_back("Set-Cookie", set_cookie(state_cookie(secure), "", secure, 0));
    return r;
  }
  auto caller = preview_caller(cookie_value(cookies, pass_cookie(secure)), host);
  if (!caller) {
    if (request.method != "GET" && request.method != "HEAD")
      return page(401, "Log in first: open this preview's address in your browser.");
    auto state = cookie_value(cookies, state_cookie(secure));
    if (state.size() != 64) state = new_token();
    auto r = redirect_to(options_.preview.ui_origin +
                         "/api/v1/preview/authorize?host=" + percent_encode(host) +
                         "&path=" + percent_encode(request.target) + "&state=" + state);
    r.headers.emplace_back("Set-Cookie", set_cookie(state_cookie(secure), state, secure, 600));
    return r;
  }
  // The socket slot bounds a user's preview connections, and the threads that open them: no
  // slow slot besides (a page opens six connections at once, each opened in milliseconds).
  auto slot = socket_slots_.take(caller->user.id);
  auto saved = std::make_shared<Request>(request);
  return Response::deferred([this, saved, who = *caller, host, slot = std::move(slot),
                             work = own_work()] {
    std::string space_id;
    auto answer = guarded(*saved, [&] { return preview_relay(who, *saved, host, slot, space_id); });
    answer.authenticated = true;
    audit_preview(*saved, who.user, answer, space_id);
    return answer;
  });
}

// The pass's user while the UI session it came from lives and the user is enabled.
std::optional<Caller> Api::preview_caller(const std::string& pass, const std::string& host) {
  const auto grant = previews_.find(pass, host);
  if (!grant) return std::nullopt;
  if (!store_.sessions().use(grant->session_sha256, options_.sessions.idle.count())) {
    previews_.forget_session(grant->session_sha256);
    return std::nullopt;
  }
  auto user = store_.users().get(grant->user_id);
  if (!user || user->disabled) return std::nullopt;
  Caller caller;
  caller.user = std::move(*user);
  caller.by_session = true;
  return caller;
}

Response Api::preview_relay(const Caller& caller, const Request& request, const std::string& host,
                            std::shared_ptr<void> slot, std::string& space_id) {
  auto hit = preview_space(caller, host);
  space_id = hit.space.id;
  const auto port = std::to_string(hit.port.port);
  if (hit.space.state == store::SpaceState::Suspended ||
      hit.space.state == store::SpaceState::Suspending) {
    options_.access->wake(hit.space.id, "preview of port " + port);
    if (auto now = store_.spaces().get(hit.space.id)) hit.space = *now;
  }
  if (hit.space.state != store::SpaceState::Running)
    throw HttpError(409, "the space " + hit.space.name + " is " +
                             store::to_string(hit.space.state) + ": its owner starts it");
  int fd = -1;
  try {
    fd = options_.access->open_port(hit.space.id, hit.port.port);
  } catch (const engine::EngineError& e) {
    throw HttpError(502, "nothing answers on port " + port + " of " + hit.space.name + " yet (" +
                             e.what() + ")");
  }
  auto relay = std::make_shared<Relay>();
  relay->fd = fd;
  const auto client = client_address(request, options_.sessions.trusted_proxies);
  relay->rewrite = [client, https = options_.preview.https](HeaderFields& fields) {
    rewrite_fields(fields, client, https);
  };
  relay->hold = std::make_shared<std::pair<std::shared_ptr<void>, std::shared_ptr<void>>>(
      std::move(slot), options_.access->hold(hit.space.id));
  auto watch = std::make_shared<std::atomic<std::uint64_t>>(0);
  const auto pass = cookie_value(request.header("cookie"), pass_cookie(options_.preview.https));
  relay->open = [this, watch, pass, host, space = hit.space.id](std::shared_ptr<RelayEnd> end) {
    watch->store(sockets_->add(
        [this, pass, host, space] {
          const auto now = preview_caller(pass, host);
          if (!now) return false;
          const auto found = preview_space(*now, host);  // throws when refused now
          return found.space.id == space && found.space.state == store::SpaceState::Running;
        },
        [end] { end->close(); }));
  };
  relay->close = [this, watch] { sockets_->remove(watch->load()); };
  Response response;
  response.relay = std::move(relay);
  return response;
}

}  // namespace bowline::api
