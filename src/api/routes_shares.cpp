// /api/v1/spaces/{id}/shares and /api/v1/shares: a space's owner (or an admin) shares it with
// another user as viewer, user or admin (space_roles.hpp says what each may do); the user the
// share names may also end it themselves. Each change is an event (space.shared,
// space.unshared), which the owner, the colleague and admins see; what the colleague has open
// into the space is checked again within a second (SocketWatch), so an unshare closes it, and
// a running guest takes the keys of who may now ssh in at once (Engine::refresh_keys).
#include "api/api.hpp"
#include "api/body.hpp"
#include "api/space_roles.hpp"
#include "engine/event_kinds.hpp"

namespace bowline::api {

namespace {

nlohmann::json share_json(const store::Share& share) {
  return {{"user", share.username},
          {"role", store::to_string(share.role)},
          {"createdAt", share.created_at}};
}

store::ShareRole role_from(const nlohmann::json& body) {
  const auto text = required_string(body, "role");
  const auto role = store::parse_share_role(text);
  if (!role) throw HttpError(422, "role: \"" + text + "\" is not viewer, user or admin");
  return *role;
}

// Whether a share puts the colleague's SSH keys into the guest's owner account: user and
// admin roles do (they may ssh in), a viewer's does not.
bool brings_keys(std::optional<store::ShareRole> role, const store::User& user) {
  return role && *role != store::ShareRole::Viewer && !user.ssh_keys.empty() && !user.disabled;
}

}  // namespace

// The space, when the caller may change who it is shared with: its owner or an admin.
store::Space Api::shared_space(const Caller& caller, const std::string& id) {
  const auto space = visible_space(caller, id, store::ShareRole::Viewer);
  if (!caller.admin() && space.owner_id != caller.user.id)
    throw HttpError(403, "only the space's owner or an admin shares it");
  if (!space.owner_id)
    throw HttpError(409, "space " + space.name + " is an unclaimed pool member: nobody's to share");
  return space;
}

void Api::add_share_routes() {
  router_.add("GET", "/api/v1/spaces/{id}/shares", Access::OwnerOrAdmin,
              [this](const Caller& caller, const Request& request) {
                const auto space =
                    visible_space(caller, request.param("id"), store::ShareRole::Viewer);
                auto out = nlohmann::json::array();
                for (const auto& share : store_.shares().of_space(space.id))
                  out.push_back(share_json(share));
                return Response::json(200, out);
              });

  router_.add(
      "PUT", "/api/v1/spaces/{id}/shares/{username}", Access::OwnerOrAdmin,
      [this](const Caller& caller, const Request& request) {
        const auto space = shared_space(caller, request.param("id"));
        const auto role = role_from(object_body(request));
        const auto& name = request.param("username");
        const auto user = store_.users().find_by_username(name);
        if (!user) throw HttpError(404, "no user named " + name);
        if (user->id == *space.owner_id)
          throw HttpError(422, name + " owns space " + space.name + ": there is nothing to share");
        const auto before = store_.shares().role_of(space.id, user->id);
        store_.shares().put(space.id, user->id, role);
        if (brings_keys(before, *user) != brings_keys(role, *user)) engine_.refresh_keys(space.id);
        events_.publish(
            engine::event::kSpaceShared, space.id,
            {{"user", user->username}, {"userId", user->id}, {"role", store::to_string(role)}});
        return Response::json(200, {{"space", space.id},
                                    {"name", space.name},
                                    {"user", user->username},
                                    {"role", store::to_string(role)}});
      });

  // The owner, an admin, or the colleague leaving a share.
  router_.add("DELETE", "/api/v1/spaces/{id}/shares/{username}", Access::OwnerOrAdmin,
              [this](const Caller& caller, const Request& request) {
                const auto& name = request.param("username");
                const auto user = store_.users().find_by_username(name);
                const auto space =
                    user && user->id == caller.user.id
                        ? visible_space(caller, request.param("id"), store::ShareRole::Viewer)
                        : shared_space(caller, request.param("id"));
                const auto before =
                    user ? store_.shares().role_of(space.id, user->id) : std::nullopt;
                if (!user || !store_.shares().remove(space.id, user->id))
                  throw HttpError(404, "space " + space.name + " is not shared with " + name);
                if (brings_keys(before, *user)) engine_.refresh_keys(space.id);
                events_.publish(engine::event::kSpaceUnshared, space.id,
                                {{"user", user->username}, {"userId", user->id}});
                return Response::no_content();
              });

  // The shares the caller holds; an admin's ?all=1: every share there is.
  router_.add(
      "GET", "/api/v1/shares", Access::Any, [this](const Caller& caller, const Request& request) {
        const auto all = request.query.find("all");
        const bool every =
            all != request.query.end() && all->second != "0" && all->second != "false";
        if (every) require_admin(caller);
        auto out = nlohmann::json::array();
        for (const auto& share :
             every ? store_.shares().all() : store_.shares().of_user(caller.user.id)) {
          const auto space = store_.spaces().get(share.space_id);
          if (!space) continue;
          auto entry = share_json(share);
          entry["space"] = space->id;
          entry["name"] = space->name;
          const auto owner = space->owner_id ? store_.users().get(*space->owner_id) : std::nullopt;
          entry["owner"] = owner ? owner->username : "";
          out.push_back(std::move(entry));
        }
        return Response::json(200, out);
      });
}

}  // namespace bowline::api
