// /api/v1/nodes (what the nodes can run and why not; kept for a while, see ReportCache; cordons
// and drains) and
// /metrics (Prometheus text; the bowline_space_* series of what spaces use: space_metrics.cpp).
#include <map>

#include "api/api.hpp"
#include "api/body.hpp"
#include "util/host_paths.hpp"

namespace bowline::api {

namespace {

// A node's report as a user reads it: the checks and their words, without the host's paths
// (the images directory, the library), which only admins need to fix what is missing.
void redact_paths(nlohmann::json& value) {
  if (value.is_string()) {
    value = util::redact_host_paths(value.get<std::string>());
  } else if (value.is_structured()) {
    for (auto& item : value) redact_paths(item);
  }
}

}  // namespace

void Api::add_node_routes() {
  router_.add("GET", "/api/v1/nodes", Access::Any,
              [this](const Caller& caller, const Request& request) {
                const auto refresh = request.query.find("refresh");
                const bool fresh = refresh != request.query.end() && refresh->second != "0";
                // A fresh check makes the host work: admins only, so that no user can keep it busy.
                if (fresh && !caller.admin())
                  throw HttpError(403, "only admins may ask for a fresh node check");
                auto nodes = nlohmann::json::array();
                for (auto& report : node_reports_) {
                  auto node = report->get(fresh);
                  if (node.contains("name") && node["name"].is_string())
                    if (const auto why = engine_.cordoned(node["name"].get<std::string>()))
                      node["cordoned"] = *why;
                  const auto away = node.contains("name") && node["name"].is_string()
                                        ? engine_.node_unreachable(node["name"])
                                        : std::nullopt;
                  if (away && !node.contains("reason")) {
                    node["state"] = "unreachable";
                    node["reason"] = *away;
                  }
                  nodes.push_back(std::move(node));
                }
                if (!caller.admin()) redact_paths(nodes);
                return Response::json(200, nodes);
              });

  add_node_admin_routes();

  router_.add("GET", "/metrics", Access::Any, [this](const Caller& caller, const Request&) {
    std::map<std::string, int> by_state;
    for (auto state :
         {store::SpaceState::Pending, store::SpaceState::Creating, store::SpaceState::Running,
          store::SpaceState::Stopping, store::SpaceState::Stopped, store::SpaceState::Starting,
          store::SpaceState::Deleting, store::SpaceState::Error, store::SpaceState::Suspending,
          store::SpaceState::Suspended})
      by_state[store::to_string(state)] = 0;
    for (const auto& space : store_.spaces().list()) ++by_state[store::to_string(space.state)];
    std::string out;
    out += "# HELP bowline_spaces Spaces by state.\n# TYPE bowline_spaces gauge\n";
    for (const auto& [state, count] : by_state)
      out += "bowline_spaces{state=\"" + state + "\"} " + std::to_string(count) + "\n";
    out += "# HELP bowline_templates Templates.\n# TYPE bowline_templates gauge\n";
    out += "bowline_templates " + std::to_string(store_.templates().list().size()) + "\n";
    out += "# HELP bowline_users Users.\n# TYPE bowline_users gauge\n";
    out += "bowline_users " + std::to_string(store_.users().count()) + "\n";
    out += "# HELP bowline_event_seq The latest event's sequence number.\n";
    out += "# TYPE bowline_event_seq counter\n";
    out += "bowline_event_seq " + std::to_string(store_.events().latest_seq()) + "\n";
    out += "# HELP bowline_http_requests_total Requests answered.\n";
    out += "# TYPE bowline_http_requests_total counter\n";
    out += "bowline_http_requests_total " + std::to_string(requests_.load()) + "\n";
    out += "# HELP bowline_http_server_errors_total Requests answered with 5xx.\n";
    out += "# TYPE bowline_http_server_errors_total counter\n";
    out += "bowline_http_server_errors_total " + std::to_string(failures_.load()) + "\n";
    out += "# HELP bowline_event_streams Open event streams.\n# TYPE bowline_event_streams gauge\n";
    out += "bowline_event_streams " + std::to_string(stream_listeners_.load()) + "\n";
    // What each running space uses: an admin sees every space, a user their own.
    auto spaces = engine_.stats().running();
    if (!caller.admin())
      std::erase_if(spaces,
                    [&](const engine::SpaceStats& s) { return s.owner_id != caller.user.id; });
    out += space_metrics_text(spaces, engine_.stats().cost());
    Response response;
    response.content_type = "text/plain; version=0.0.4; charset=utf-8";
    response.body = std::move(out);
    return response;
  });
}

// Operators take a node out of placement and move its spaces away.
void Api::add_node_admin_routes() {
  router_.add(
      "POST", "/api/v1/nodes/{name}/cordon", Access::Admin,
      [this](const Caller&, const Request& request) {
        const auto body = request.body.empty() ? nlohmann::json::object() : object_body(request);
        engine_.cordon(request.param("name"), true, string_field(body, "reason").value_or(""));
        return Response::json(200, {{"node", request.param("name")}, {"cordoned", true}});
      });
  router_.add("POST", "/api/v1/nodes/{name}/uncordon", Access::Admin,
              [this](const Caller&, const Request& request) {
                engine_.cordon(request.param("name"), false);
                return Response::json(200, {{"node", request.param("name")}, {"cordoned", false}});
              });
  router_.add("POST", "/api/v1/nodes/{name}/drain", Access::Admin,
              [this](const Caller&, const Request& request) {
                auto moves = nlohmann::json::array();
                for (const auto& d : engine_.drain(request.param("name"))) {
                  nlohmann::json m{{"space", d.space_name}, {"spaceId", d.space_id}};
                  if (d.error.empty()) {
                    m["to"] = d.to;
                    m["operation"] = d.operation;
                  } else {
                    m["error"] = d.error;
                  }
                  moves.push_back(std::move(m));
                }
                return Response::json(202, {{"node", request.param("name")}, {"moves", moves}});
              });
}

}  // namespace bowline::api
