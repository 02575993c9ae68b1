// GET /api/v1/spaces/{id}/stats: what a space uses now and over the last hour, from the
// engine's stats sampler (memory only; no libvirt call). Its owner and admins only.
#include <charconv>

#include "api/api.hpp"
#include "api/space_stats.hpp"

namespace bowline::api {

namespace {

// ?since=MS (Unix milliseconds): only points after it, for a chart that has the rest.
std::int64_t since_of(const Request& request) {
  const auto it = request.query.find("since");
  if (it == request.query.end() || it->second.empty()) return 0;
  std::int64_t since = 0;
  const auto& text = it->second;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), since);
  if (error != std::errc() || end != text.data() + text.size() || since < 0)
    throw HttpError(422, "since must be a time in Unix milliseconds, not \"" + text + "\"");
  return since;
}

}  // namespace

void Api::add_stats_routes() {
  router_.add("GET", "/api/v1/spaces/{id}/stats", Access::OwnerOrAdmin,
              [this](const Caller& caller, const Request& request) {
                const auto space =
                    visible_space(caller, request.param("id"), store::ShareRole::Viewer);
                const auto since = since_of(request);
                std::string node = space.node;
                if (node.empty() && !engine_.nodes().empty())
                  node = engine_.nodes().front()->name();
                const engine::NodeCapabilities* capabilities = nullptr;
                for (const auto* n : engine_.nodes())
                  if (n->name() == node) capabilities = &n->capabilities();
                return Response::json(
                    200, space_stats_json(engine_.stats(), space, node, since, capabilities));
              });
}

}  // namespace bowline::api
