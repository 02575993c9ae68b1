// /api/v1/spaces/{id}/snapshots and /clone: a space's snapshots are its owner's (or
// an admin's) to take, restore and delete; a clone is a new space, so it is the caller's unless
// an admin names another owner. Each change is an operation (202), as the lifecycle verbs are.
#include "api/api.hpp"
#include "api/body.hpp"
#include "api/json.hpp"
#include "spec/quantity.hpp"

namespace bowline::api {

namespace {

nlohmann::json snapshot_json(const store::Snapshot& s) {
  return {{"name", s.name},
          {"memory", s.memory},
          {"bestEffort", s.best_effort},
          {"running", s.running},
          {"templateRevision", s.template_revision},
          {"sizeBytes", s.size_bytes},
          {"size", spec::format_binary_size(static_cast<std::uint64_t>(s.size_bytes))},
          {"createdAt", s.created_at}};
}

}  // namespace

void Api::add_snapshot_routes() {
  router_.add("GET", "/api/v1/spaces/{id}/snapshots", Access::OwnerOrAdmin,
              [this](const Caller& caller, const Request& request) {
                const auto space =
                    visible_space(caller, request.param("id"), store::ShareRole::Viewer);
                auto out = nlohmann::json::array();
                for (const auto& s : engine_.snapshots_of(space.id))
                  out.push_back(snapshot_json(s));
                return Response::json(200, out);
              });

  router_.add("POST", "/api/v1/spaces/{id}/snapshots", Access::OwnerOrAdmin,
              [this](const Caller& caller, const Request& request) {
                const auto space =
                    visible_space(caller, request.param("id"), store::ShareRole::Admin);
                const auto body = object_body(request);
                const auto op = engine_.snapshot_space(space.id, required_string(body, "name"),
                                                       bool_field(body, "memory").value_or(false));
                return Response::json(202, accepted_json(space.id, op));
              });

  router_.add("POST", "/api/v1/spaces/{id}/snapshots/{name}/restore", Access::OwnerOrAdmin,
              [this](const Caller& caller, const Request& request) {
                const auto space =
                    visible_space(caller, request.param("id"), store::ShareRole::Admin);
                const auto body = object_body(request);
                const auto op = engine_.restore_space(space.id, request.param("name"),
                                                      bool_field(body, "stop").value_or(false));
                return Response::json(202, accepted_json(space.id, op));
              });

  router_.add("DELETE", "/api/v1/spaces/{id}/snapshots/{name}", Access::OwnerOrAdmin,
              [this](const Caller& caller, const Request& request) {
                const auto space =
                    visible_space(caller, request.param("id"), store::ShareRole::Admin);
                const auto op = engine_.delete_snapshot(space.id, request.param("name"));
                return Response::json(202, accepted_json(space.id, op));
              });

  router_.add(
      "POST", "/api/v1/spaces/{id}/clone", Access::OwnerOrAdmin,
      [this](const Caller& caller, const Request& request) {
        const auto source = visible_space(caller, request.param("id"), store::ShareRole::Admin);
        const auto body = object_body(request);
        engine::CloneRequest clone;
        clone.source_id = source.id;
        clone.name = required_string(body, "name");
        clone.snapshot = string_field(body, "snapshot");
        clone.full = bool_field(body, "full").value_or(false);
        clone.owner_id = caller.user.id;
        if (auto owner = string_field(body, "owner"); owner && *owner != caller.user.username) {
          require_admin(caller);
          auto user = store_.users().find_by_username(*owner);
          if (!user) throw HttpError(422, "no user named " + *owner);
          clone.owner_id = user->id;
        }
        const auto accepted = engine_.clone_space(clone);
        auto out = accepted_json(accepted.space.id, accepted.operation_id);
        if (out["space"].is_null()) out["space"] = space_json_of(accepted.space);
        auto response = Response::json(202, out);
        response.headers.emplace_back("Location", "/api/v1/spaces/" + accepted.space.id);
        return response;
      });
}

}  // namespace bowline::api
