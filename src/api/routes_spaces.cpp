// /api/v1/spaces and /api/v1/operations: the lifecycle through the engine. A user sees their
// own spaces and those shared with them (space_roles.hpp: what each role may do); any other
// user's space is answered as if it did not exist (404).
#include <limits>
#include <set>

#include "api/api.hpp"
#include "api/body.hpp"
#include "api/json.hpp"
#include "api/space_roles.hpp"
#include "api/spaces_list.hpp"
#include "engine/host_keys.hpp"

namespace bowline::api {

// How to reach the space from one's own machine (docs/access.md): the ssh line, the host key
// it pins, and a forward per port the template lists. `owner` is empty when the caller owns the
// space (dev.bowline); an admin reaches another user's as dev.OWNER.bowline.
nlohmann::json Api::connect_json(const store::Space& space, const std::string& owner) {
  const auto target = space.name + (owner.empty() ? "" : "." + owner);
  nlohmann::json ports = nlohmann::json::array();
  std::string owner_name = owner;
  if (owner_name.empty() && space.owner_id)
    if (auto user = store_.users().get(*space.owner_id)) owner_name = user->username;
  try {
    for (const auto& p : engine_.space_spec(space).ports) {
      nlohmann::json entry = {
          {"port", p.port},
          {"forward", "bowline forward " + target + " " + std::to_string(p.port)}};
      if (!p.name.empty()) entry["name"] = p.name;
      if (p.preview != spec::Preview::None) {
        entry["preview"] = spec::to_string(p.preview);
        const auto url = preview_url(options_.preview, p.port, space.name, owner_name);
        if (url)
          entry["previewUrl"] = *url;
        else
          entry["previewNote"] = options_.preview.enabled()
                                     ? "PORT--SPACE--OWNER is longer than a DNS label (63)"
                                     : "previews are off on this server (server.preview.domain)";
      }
      ports.push_back(entry);
    }
  } catch (const std::exception&) {  // a template that no longer expands: no ports to show
  }
  return {{"ssh", "bowline ssh " + target},
          {"sshHost", target + ".bowline"},
          {"hostKeyFingerprint", space.host_key_public.empty()
                                     ? nlohmann::json(nullptr)
                                     : nlohmann::json(engine::fingerprint(space.host_key_public))},
          {"ports", ports},
          // Asked now (2.5 s at most), so the page says why SSH or VM Terminal fails.
          {"sshPort", engine_.ssh_port_state(space.id)},
          {"terminal",
           space.terminal_key.empty()
               ? nlohmann::json{{"available", false},
                                {"why", "the space gets its terminal key at its next start"}}
               : nlohmann::json{{"available", true}}}};
}

namespace {

// ?all (anything but 0 or false): every user's spaces, for an admin.
bool wants_all(const Request& request) {
  const auto all_param = request.query.find("all");
  return all_param != request.query.end() && all_param->second != "0" &&
         all_param->second != "false";
}

// The body of POST /spaces as the engine's request; another owner than the caller is for
// admins only.
engine::CreateSpaceRequest create_request_from(store::Store& store, const Caller& caller,
                                               const nlohmann::json& body) {
  engine::CreateSpaceRequest create;
  create.owner_id = caller.user.id;
  if (auto owner = string_field(body, "owner"); owner && *owner != caller.user.username) {
    require_admin(caller);
    auto user = store.users().find_by_username(*owner);
    if (!user) throw HttpError(422, "no user named " + *owner);
    create.owner_id = user->id;
  }
  create.template_name = required_string(body, "template");
  create.name = required_string(body, "name");
  create.ip = string_field(body, "ip");
  create.start = bool_field(body, "start").value_or(true);
  return create;
}

// An operation id from the path: a number of at most 18 digits.
std::optional<std::int64_t> operation_id(const std::string& raw) {
  if (raw.empty() || raw.size() > 18 || raw.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(raw);
}

}  // namespace

void Api::add_space_routes() {
  router_.add("GET", "/api/v1/spaces", Access::Any,
              [this](const Caller& caller, const Request& request) {
                const bool all = wants_all(request);
                if (all) require_admin(caller);
                std::set<std::string> shared;  // the spaces shared with the caller
                if (!all)
                  for (const auto& share : store_.shares().of_user(caller.user.id))
                    shared.insert(share.space_id);
                Response response;
                response.shared_body = spaces_list_.list(
                    store_, all ? std::nullopt : std::optional<std::int64_t>(caller.user.id),
                    engine_.learned_addresses(), stats_texts_.get(engine_.stats()), shared);
                return response;
              });

  router_.add(
      "POST", "/api/v1/spaces", Access::Any, [this](const Caller& caller, const Request& request) {
        const auto body = object_body(request);
        const auto create = create_request_from(store_, caller, body);
        const auto accepted = engine_.create_space(create, string_field(body, "node").value_or(""));
        auto out = accepted_json(accepted.space.id, accepted.operation_id);
        if (out["space"].is_null()) out["space"] = space_json_of(accepted.space);
        auto response = Response::json(202, out);
        response.headers.emplace_back("Location", "/api/v1/spaces/" + accepted.space.id);
        return response;
      });

  router_.add(
      "GET", "/api/v1/spaces/{id}", Access::OwnerOrAdmin,
      [this](const Caller& caller, const Request& request) {
        const auto space = visible_space(caller, request.param("id"), store::ShareRole::Viewer);
        // The SSH check waits on the guest (2.5 s at most): off the HTTP workers.
        return Response::deferred([this, caller, space] {
          const auto view = engine_.describe(space.id);
          auto out = space_json_of(view.space);
          out["address"] = view.address ? nlohmann::json(*view.address) : nlohmann::json();
          out["info"] = space_info_json(view);
          const auto owner = out.value("owner", "");
          out["info"]["connect"] =
              connect_json(view.space, owner == caller.user.username ? "" : owner);
          // How the caller holds it, and whom it is shared with.
          out["access"] = access_of(store_, caller, view.space);
          auto shares = nlohmann::json::array();
          for (const auto& share : store_.shares().of_space(space.id))
            shares.push_back({{"user", share.username}, {"role", store::to_string(share.role)}});
          out["shares"] = std::move(shares);
          if (auto stats =
                  engine_.stats().space(space.id, std::numeric_limits<std::int64_t>::max()))
            if (auto current = current_stats_json(*stats); !current.is_null())
              out["stats"] = std::move(current);
          return Response::json(200, out);
        });
      });

  // The guest's SSH host keys, known before its first boot (bowline made them): what
  // `bowline ssh` pins, so no client ever trusts a key on first use.
  router_.add("GET", "/api/v1/spaces/{id}/host-keys", Access::OwnerOrAdmin,
              [this](const Caller& caller, const Request& request) {
                const auto space =
                    visible_space(caller, request.param("id"), store::ShareRole::Viewer);
                nlohmann::json keys = nlohmann::json::array();
                if (!space.host_key_public.empty())
                  keys.push_back(
                      {{"type", space.host_key_public.substr(0, space.host_key_public.find(' '))},
                       {"publicKey", space.host_key_public},
                       {"fingerprint", engine::fingerprint(space.host_key_public)}});
                nlohmann::json out = {{"space", space.id}, {"name", space.name}, {"keys", keys}};
                if (keys.empty())
                  out["note"] =
                      "this space was made before bowline pinned host keys: recreate it to "
                      "connect with bowline ssh";
                return Response::json(200, out);
              });

  add_space_change_routes();
}

// Changes to a space (the lifecycle verbs, its address) and the operations the verbs start.
void Api::add_space_change_routes() {
  // `need`: start, stop and restart are a share's user's; delete its admin's.
  const auto lifecycle = [this](std::int64_t (engine::Engine::*verb)(const std::string&),
                                store::ShareRole need) {
    return [this, verb, need](const Caller& caller, const Request& request) {
      const auto space = visible_space(caller, request.param("id"), need);
      object_body(request);  // none, or {}: a malformed one is refused before anything moves
      const auto operation = (engine_.*verb)(space.id);
      return Response::json(202, accepted_json(space.id, operation));
    };
  };
  router_.add("POST", "/api/v1/spaces/{id}/start", Access::OwnerOrAdmin,
              lifecycle(&engine::Engine::start_space, store::ShareRole::User));
  router_.add("POST", "/api/v1/spaces/{id}/stop", Access::OwnerOrAdmin,
              lifecycle(&engine::Engine::stop_space, store::ShareRole::User));
  router_.add("POST", "/api/v1/spaces/{id}/restart", Access::OwnerOrAdmin,
              lifecycle(&engine::Engine::restart_space, store::ShareRole::User));
  router_.add("DELETE", "/api/v1/spaces/{id}", Access::OwnerOrAdmin,
              lifecycle(&engine::Engine::delete_space, store::ShareRole::Admin));
  // A start resumes it; its console, display, tunnel and terminal do too.
  router_.add(
      "POST", "/api/v1/spaces/{id}/suspend", Access::OwnerOrAdmin,
      [this](const Caller& caller, const Request& request) {
        const auto space = visible_space(caller, request.param("id"), store::ShareRole::User);
        object_body(request);
        const auto operation = engine_.suspend_space(space.id, "asked by " + caller.user.username);
        return Response::json(202, accepted_json(space.id, operation));
      });

  // Where spaces run is the operators' to decide.
  router_.add(
      "POST", "/api/v1/spaces/{id}/move", Access::Admin,
      [this](const Caller& caller, const Request& request) {
        const auto space = visible_space(caller, request.param("id"), store::ShareRole::Admin);
        const auto to = required_string(object_body(request), "to");
        return Response::json(202, accepted_json(space.id, engine_.move_space(space.id, to)));
      });

  router_.add("PUT", "/api/v1/spaces/{id}/ip", Access::OwnerOrAdmin,
              [this](const Caller& caller, const Request& request) {
                const auto space =
                    visible_space(caller, request.param("id"), store::ShareRole::Admin);
                engine_.set_ip(space.id, required_string(object_body(request), "ip"));
                return Response::json(200, space_json_of(*store_.spaces().get(space.id)));
              });

  router_.add("GET", "/api/v1/operations/{id}", Access::OwnerOrAdmin,
              [this](const Caller& caller, const Request& request) {
                const auto& raw = request.param("id");
                const auto not_found = HttpError(404, "no operation with id " + raw);
                const auto id = operation_id(raw);
                if (!id) throw not_found;
                const auto op = store_.operations().get(*id);
                if (!op) throw not_found;
                if (!caller.admin()) {
                  // The space may be gone (a finished delete): its last known owner, or a
                  // share of it, decides.
                  const auto known = op->space_id ? owners_.lookup(*op->space_id) : std::nullopt;
                  if (!known || (known->owner != caller.user.id &&
                                 !owners_.shared_with(*op->space_id, caller.user.id)))
                    throw not_found;
                }
                return Response::json(200, operation_json(*op));
              });
}

}  // namespace bowline::api
