// /api/v1/pools: members of a NAT template kept ready; anyone may claim one, admins manage them.
#include "api/api.hpp"
#include "api/body.hpp"
#include "api/json.hpp"

namespace bowline::api {

nlohmann::json Api::pool_json_of(const store::Pool& pool) {
  nlohmann::json out = {{"id", pool.id},
                        {"name", pool.name},
                        {"template", nullptr},
                        {"size", pool.size},
                        {"createdAt", pool.created_at},
                        {"updatedAt", pool.updated_at}};
  if (auto tmpl = store_.templates().get(pool.template_id)) out["template"] = tmpl->name;
  auto members = nlohmann::json::array();
  // Ready: claimable at once, booted or waiting suspended (server.pools.wait).
  int ready = 0, waiting_suspended = 0;
  for (const auto& m : store_.spaces().list_for_pool(pool.id)) {
    ready += m.state == store::SpaceState::Running || m.state == store::SpaceState::Suspended;
    waiting_suspended += m.state == store::SpaceState::Suspended;
    nlohmann::json member = {{"id", m.id}, {"name", m.name}, {"state", store::to_string(m.state)}};
    if (!m.error.empty()) member["error"] = m.error;
    members.push_back(std::move(member));
  }
  out["ready"] = ready;
  out["suspended"] = waiting_suspended;
  out["members"] = std::move(members);
  return out;
}

void Api::add_pool_routes() {
  router_.add("GET", "/api/v1/pools", Access::Any, [this](const Caller&, const Request&) {
    auto out = nlohmann::json::array();
    for (const auto& pool : store_.pools().list()) out.push_back(pool_json_of(pool));
    return Response::json(200, out);
  });

  router_.add("POST", "/api/v1/pools", Access::Admin,
              [this](const Caller&, const Request& request) {
                const auto body = object_body(request);
                const auto name = required_string(body, "name");
                const auto tmpl = required_string(body, "template");
                // Members are made and claimed on this host: a pool has no other node.
                if (auto node = string_field(body, "node"); node && *node != "local")
                  throw HttpError(422, "pools run on the local libvirt node only, not on " + *node);
                if (!body.contains("size") || !body["size"].is_number_integer())
                  throw HttpError(400, "size: a whole number of members is required");
                const auto pool = engine_.create_pool(name, tmpl, body["size"].get<std::int64_t>());
                auto response = Response::json(201, pool_json_of(pool));
                response.headers.emplace_back("Location", "/api/v1/pools/" + pool.name);
                return response;
              });

  router_.add("GET", "/api/v1/pools/{name}", Access::Any,
              [this](const Caller&, const Request& request) {
                auto pool = store_.pools().find_by_name(request.param("name"));
                if (!pool) throw HttpError(404, "no pool named " + request.param("name"));
                return Response::json(200, pool_json_of(*pool));
              });

  router_.add("DELETE", "/api/v1/pools/{name}", Access::Admin,
              [this](const Caller&, const Request& request) {
                engine_.delete_pool(request.param("name"));
                return Response::json(200, {{"deleted", request.param("name")}});
              });

  // 200 when the member is already its owner's (personalised in place by the guest agent);
  // 202 with the operation when it restarts or boots into the owner's seed.
  router_.add("POST", "/api/v1/pools/{name}/claim", Access::Any,
              [this](const Caller& caller, const Request& request) {
                const auto body = object_body(request);
                const auto name = required_string(body, "name");
                const auto claimed = engine_.claim(request.param("name"), caller.user.id, name);
                nlohmann::json out = {{"method", engine::to_string(claimed.method)},
                                      {"operation", nullptr}};
                if (claimed.operation)
                  if (auto op = store_.operations().get(*claimed.operation))
                    out["operation"] = operation_json(*op);
                if (!claimed.agent_problem.empty()) out["agentProblem"] = claimed.agent_problem;
                auto space = store_.spaces().get(claimed.space.id);
                out["space"] = space_json_of(space ? *space : claimed.space);
                auto response = Response::json(claimed.operation ? 202 : 200, out);
                response.headers.emplace_back("Location", "/api/v1/spaces/" + claimed.space.id);
                return response;
              });
}

}  // namespace bowline::api
