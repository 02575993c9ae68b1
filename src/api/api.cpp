#include "api/api.hpp"

#include <cstdio>

#include "api/auth.hpp"
#include "api/console_hub.hpp"
#include "api/error_status.hpp"
#include "api/json.hpp"
#include "api/origin.hpp"
#include "api/space_roles.hpp"
#include "store/errors.hpp"
#include "util/host_paths.hpp"
#include "util/upstream_error.hpp"

namespace bowline::api {

void require_admin(const Caller& caller) {
  if (!caller.admin()) throw HttpError(403, "only an admin may do this");
}

bool has_permission(const Caller& caller, store::Permission permission) {
  return caller.admin() || caller.user.has(permission);
}

Api::Api(store::Store& store, engine::Engine& engine, engine::EventBus& events, ApiOptions options)
    : store_(store),
      engine_(engine),
      events_(events),
      options_(std::move(options)),
      owners_(store, events),
      sessions_(store, options_.sessions),
      previews_(options_.clock ? *options_.clock : system_clock_),
      socket_slots_(options_.max_sockets_per_user, "WebSockets into spaces open"),
      stream_slots_(options_.max_streams_per_user, "event streams open"),
      slow_slots_(options_.max_slow_requests_per_user, "requests waiting on a space",
                  "wait for one to be answered") {
  if (!options_.access) options_.access = &engine_;
  if (!options_.log)
    options_.log = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  sockets_ = std::make_unique<SocketWatch>();
  audit_ = std::make_unique<AuditTrail>(store_, options_.clock ? *options_.clock : system_clock_,
                                        options_.audit, options_.log);
  consoles_ = std::make_unique<ConsoleHub>(
      [access = options_.access](const std::string& space_id) {
        return access->open_console(space_id);
      },
      options_.console_scrollback);
  const util::Clock& clock = options_.clock ? *options_.clock : system_clock_;
  for (auto* node : engine_.nodes())
    node_reports_.push_back(
        std::make_unique<ReportCache>(clock, options_.node_report_max_age_ms, [this, node] {
          auto record = options_.report ? options_.report(*node) : node->report();
          if (!record.contains("name")) record["name"] = node->name();
          if (!record.contains("kind")) record["kind"] = node->kind();
          record["capabilities"] = node->capabilities().to_json();
          return record;
        }));
  add_session_routes();
  add_user_routes();
  add_template_routes();
  add_space_routes();
  add_pool_routes();
  add_disk_routes();
  add_snapshot_routes();
  add_share_routes();
  add_preview_routes();
  add_sso_routes();
  add_export_routes();
  add_event_routes();
  add_node_routes();
  add_access_routes();
  add_stats_routes();
  add_audit_routes();
  add_backup_route();
}

Api::~Api() {
  // Replays run on threads of their own; their streams are closed by now (the server stopped).
  std::unique_lock lock(replays_mutex_);
  replays_done_.wait(lock, [this] { return replays_ == 0; });
}

namespace {

bool under_api(const std::string& path) {
  return path == "/metrics" || path == "/api/v1" || path.rfind("/api/v1/", 0) == 0;
}

Response error_response(int status, const std::string& message,
                        const nlohmann::json& extra = nullptr) {
  nlohmann::json body = {{"error", message}};
  if (extra.is_object())
    for (const auto& [key, value] : extra.items()) body[key] = value;
  auto response = Response::json(status, body);
  if (status == 401) response.headers.emplace_back("WWW-Authenticate", "Bearer");
  return response;
}

constexpr int kSqliteFull = 13;  // SQLITE_FULL: the database's disk is full

bool changes_state(const std::string& method) {
  return method != "GET" && method != "HEAD" && method != "OPTIONS";
}

}  // namespace

Response Api::handle(Request& request) {
  ++requests_;
  if (is_preview_request(request)) {
    auto response = guarded(request, [&] { return preview(request); });
    if (!response.later) audit_preview(request, std::nullopt, response);
    return response;
  }
  Routed routed;
  auto response = guarded(request, [&] { return route(request, routed); });
  response.authenticated = response.authenticated || routed.user.has_value();
  audit(request, routed, response);
  return response;
}

Response Api::route(Request& request, Routed& routed) {
  if (!under_api(request.path)) return error_response(404, "no such path: " + request.path);
  const auto match = router_.match(request);
  if (match.route) {
    const auto access = match.route->access;
    routed.socket = access == Access::Console || access == Access::Vnc ||
                    access == Access::Tunnel || access == Access::Terminal;
  }
  if (match.route && match.route->access == Access::Public) {
    auto response = match.route->handler(Caller{}, request);
    if (response.later) {
      // Anonymous: no user's slot; what the route reserved (a place at the password gate)
      // bounds these.
      auto saved = std::make_shared<Request>(request);
      response.later->run = [this, saved, run = std::move(response.later->run), work = own_work()] {
        return guarded(*saved, run);
      };
    }
    return response;
  }
  // An API token when the request carries one (the CLI), else the browser's session.
  std::string csrf;
  auto found = caller_of(request, &csrf);
  if (!found) {
    if (!request.header("authorization").empty())
      return error_response(401, "the token is not valid (unknown, expired or revoked)");
    return error_response(401, request.header("cookie").find(kSessionCookie) != std::string::npos
                                   ? "the session has ended: log in again"
                                   : "this needs a token (Authorization: Bearer <token>) or a "
                                     "session (POST /api/v1/session)");
  }
  const Caller caller = std::move(*found);
  routed.user = caller.user;
  // SameSite=Strict keeps the cookie off other sites' requests; the Origin and the token are
  // two more locks, for browsers or proxies that get SameSite wrong.
  if (caller.by_session && changes_state(request.method)) {
    check_origin(caller, request);
    if (!same_secret(request.header("x-csrf-token"), csrf))
      return error_response(403, "this needs the session's X-CSRF-Token header");
  }
  if (!match.route) {
    if (match.allowed.empty()) return error_response(404, "no such path: " + request.path);
    std::string allow;
    for (const auto& m : match.allowed) allow += (allow.empty() ? "" : ", ") + m;
    auto response = error_response(405, request.method + " is not allowed here; use " + allow);
    response.headers.emplace_back("Allow", allow);
    return response;
  }
  // Admin-only routes say so in the route table; the handlers do not repeat it.
  if (match.route->access == Access::Admin) require_admin(caller);
  // Long-lived connections take one of the user's slots for as long as they stay open.
  std::shared_ptr<void> slot;
  const auto access = match.route->access;
  if (access == Access::Console || access == Access::Vnc || access == Access::Tunnel ||
      access == Access::Terminal || match.route->pattern == "/api/v1/spaces/{id}/export" ||
      match.route->pattern == "/api/v1/spaces/import")
    slot = socket_slots_.take(caller.user.id);
  else if (match.route->pattern == "/api/v1/events")
    slot = stream_slots_.take(caller.user.id);
  auto response = match.route->handler(caller, request);
  if (response.later) return defer(std::move(response), request, caller, std::move(slot));
  if (response.upgrade) response.upgrade->hold = slot;
  if (response.stream) response.stream->hold = slot;
  return response;
}

Response Api::defer(Response response, const Request& request, const Caller& caller,
                    std::shared_ptr<void> slot) {
  auto slow = slow_slots_.take(caller.user.id);
  auto saved = std::make_shared<Request>(request);
  response.later->run = [this, saved, run = std::move(response.later->run), slot = std::move(slot),
                         slow = std::move(slow), work = own_work()] {
    auto answer = guarded(*saved, run);
    if (answer.upgrade) answer.upgrade->hold = slot;
    if (answer.stream) answer.stream->hold = slot;
    return answer;
  };
  return response;
}

std::shared_ptr<void> Api::own_work() {
  {
    std::lock_guard lock(replays_mutex_);
    ++replays_;
  }
  return std::shared_ptr<void>(this, [](Api* api) {
    std::lock_guard lock(api->replays_mutex_);
    --api->replays_;
    api->replays_done_.notify_all();
  });
}

Response Api::guarded(const Request& request, const std::function<Response()>& body) {
  try {
    return body();
  } catch (const HttpError& e) {
    auto response = error_response(e.status(), e.what(), e.extra());
    // A 429 says when to come back, in the header clients and proxies read.
    if (e.extra().is_object() && e.extra().contains("retryAfter"))
      response.headers.emplace_back("Retry-After", e.extra()["retryAfter"].dump());
    return response;
  } catch (const engine::EngineError& e) {
    // The engine's words are for users; what it passes on from below may name host files.
    return error_response(http_status(e.kind()), util::redact_host_paths(e.what()));
  } catch (const store::NotFoundError& e) {
    return error_response(404, e.what());
  } catch (const store::ConflictError& e) {
    return error_response(409, e.what());
  } catch (const store::SqliteError& e) {
    // The store's disk full is the operator's to fix, and nothing was written: say so plainly.
    if (e.code() == kSqliteFull)
      return server_error(request, 507,
                          "the server's store has no room left (the disk of its data directory "
                          "is full): nothing was changed; free space there and try again",
                          e.what());
    return server_error(request, 500, "internal error", e.what());
  } catch (const util::UpstreamError& e) {
    return server_error(request, 502, util::redact_host_paths(e.upstream() + ": " + e.what()),
                        e.what());
  } catch (const std::exception& e) {
    return server_error(request, 500, "internal error", e.what());
  }
}

// An exception's text may name host paths, SQL or library internals: the answer carries an
// id and `said` (words meant for the caller), the log the id with the text.
Response Api::server_error(const Request& request, int status, const std::string& said,
                           const std::string& detail) {
  ++failures_;
  const auto id = new_token().substr(0, 12);
  options_.log("bowline server: error " + id + " (" + request.method + " " + request.path +
               "): " + detail);
  return error_response(status, said + " (error id " + id + "; the server log has the details)",
                        {{"errorId", id}});
}

std::optional<Caller> Api::caller_of(const Request& request, std::string* csrf) {
  Caller caller;
  const auto authorization = request.header("authorization");
  if (!authorization.empty()) {
    auto user = authenticate(store_, authorization, &caller.expires_at);
    if (!user) return std::nullopt;
    caller.user = std::move(*user);
    return caller;
  }
  auto found = sessions_.find(request);
  if (!found) return std::nullopt;
  caller.user = std::move(found->user);
  caller.by_session = true;
  caller.session_id = found->session.id;
  if (csrf) *csrf = found->session.csrf;
  return caller;
}

store::Space Api::visible_space(const Caller& caller, const std::string& id,
                                store::ShareRole need) {
  auto space = store_.spaces().get(id);
  const auto role = space ? role_on(store_, caller, *space) : std::nullopt;
  if (!role) throw HttpError(404, "no space with id " + id);
  if (!at_least(*role, need))
    throw HttpError(403, "space " + space->name + " is shared with you as " +
                             store::to_string(*role) + "; this needs the " +
                             store::to_string(need) + " role");
  return *space;
}

nlohmann::json Api::space_json_of(const store::Space& space) {
  SpaceNames names;
  if (space.owner_id)
    if (auto owner = store_.users().get(*space.owner_id)) names.owner = owner->username;
  if (auto tmpl = store_.templates().get(space.template_id)) {
    names.template_name = tmpl->name;
    names.template_revision = tmpl->revision;
  }
  auto out = space_json(space, names);
  // Its node did not answer at the last audit: the state is what the node said before.
  if (const auto why = engine_.node_unreachable(space.node)) out["nodeUnreachable"] = *why;
  return out;
}

nlohmann::json Api::accepted_json(const std::string& space_id, std::int64_t operation) {
  nlohmann::json out = {{"operation", nullptr}, {"space", nullptr}};
  if (auto op = store_.operations().get(operation)) out["operation"] = operation_json(*op);
  if (auto space = store_.spaces().get(space_id)) out["space"] = space_json_of(*space);
  return out;
}

store::User Api::target_user(const Caller& caller, const std::string& username) {
  if (!caller.admin() && caller.user.username != username)
    throw HttpError(403, "only an admin may act on another user");
  auto user = store_.users().find_by_username(username);
  if (!user) throw HttpError(404, "no user named " + username);
  return *user;
}

}  // namespace bowline::api
