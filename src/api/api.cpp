#include "api/api.hpp"

#include "api/auth.hpp"
#include "api/json.hpp"
#include "libvirt/hypervisor.hpp"
#include "store/errors.hpp"

namespace bowline::api {

void require_admin(const Caller& caller) {
  if (!caller.admin()) throw HttpError(403, "only an admin may do this");
}

Api::Api(store::Store& store, engine::Engine& engine, engine::EventBus& events, ApiOptions options)
    : store_(store),
      engine_(engine),
      events_(events),
      options_(std::move(options)),
      owners_(store, events) {
  add_user_routes();
  add_template_routes();
  add_space_routes();
  add_pool_routes();
  add_event_routes();
  add_node_routes();
}

Api::~Api() = default;

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

int status_of(engine::EngineError::Kind kind) {
  switch (kind) {
    case engine::EngineError::Kind::NotFound:
      return 404;
    case engine::EngineError::Kind::Conflict:
      return 409;
    case engine::EngineError::Kind::Invalid:
      return 422;
  }
  return 500;
}

}  // namespace

Response Api::handle(Request& request) {
  ++requests_;
  try {
    if (!under_api(request.path)) return error_response(404, "no such path: " + request.path);
    auto user = authenticate(store_, request.header("authorization"));
    if (!user)
      return error_response(401, request.header("authorization").empty()
                                     ? "this needs a token: Authorization: Bearer <token>"
                                     : "the token is not valid (unknown, expired or revoked)");
    const auto match = router_.match(request);
    if (!match.route) {
      if (match.allowed.empty()) return error_response(404, "no such path: " + request.path);
      std::string allow;
      for (const auto& m : match.allowed) allow += (allow.empty() ? "" : ", ") + m;
      auto response = error_response(405, request.method + " is not allowed here; use " + allow);
      response.headers.emplace_back("Allow", allow);
      return response;
    }
    const Caller caller{std::move(*user)};
    return match.route->handler(caller, request);
  } catch (const HttpError& e) {
    return error_response(e.status(), e.what(), e.extra());
  } catch (const engine::EngineError& e) {
    return error_response(status_of(e.kind()), e.what());
  } catch (const store::NotFoundError& e) {
    return error_response(404, e.what());
  } catch (const store::ConflictError& e) {
    return error_response(409, e.what());
  } catch (const libvirt::HypervisorError& e) {
    ++failures_;
    return error_response(502, std::string("libvirt: ") + e.what());
  } catch (const std::exception& e) {
    ++failures_;
    return error_response(500, std::string("internal error: ") + e.what());
  }
}

store::Space Api::visible_space(const Caller& caller, const std::string& id) {
  auto space = store_.spaces().get(id);
  if (!space || (!caller.admin() && space->owner_id != caller.user.id))
    throw HttpError(404, "no space with id " + id);
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
  return space_json(space, names);
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
