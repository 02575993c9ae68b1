// Cordons and drains: an operator takes a node out of placement (kept in the store, so a
// restart keeps it out) and moves its spaces elsewhere, each by the same move as space move, a
// running one between a stop and a start. A space that no other node can take stays, with why.
#include "engine/engine.hpp"
#include "engine/event_kinds.hpp"

namespace bowline::engine {

using store::SpaceState;

void Engine::cordon(const std::string& node, bool cordoned, const std::string& reason) {
  const auto& name = node_named(node).name();
  store_.node_states().set_cordoned(name, cordoned, reason);
  nlohmann::json payload{{"node", name}, {"state", cordoned ? "cordoned" : "uncordoned"}};
  if (cordoned && !reason.empty()) payload["reason"] = reason;
  events_.publish(event::kNodeState, std::nullopt, payload);
}

std::optional<std::string> Engine::cordoned(const std::string& node) {
  const auto all = store_.node_states().cordoned();
  const auto it = all.find(node);
  if (it == all.end()) return std::nullopt;
  return it->second;
}

void Engine::refuse_cordoned(const Node& node) {
  if (const auto why = cordoned(node.name()))
    throw EngineError(EngineError::Kind::Conflict,
                      "node " + node.name() + " is cordoned" +
                          (why->empty() ? "" : " (" + *why + ")") +
                          ": it takes no new space (bowline node uncordon " + node.name() +
                          ", or choose another node)");
}

std::vector<Engine::Drained> Engine::drain(const std::string& name) {
  auto& node = node_named(name);
  if (!cordoned(node.name())) cordon(node.name(), true, "draining");
  std::vector<Drained> out;
  for (const auto& space : store_.spaces().list()) {
    if (!on_node(space, node)) continue;
    Drained d{space.id, space.name, "", 0, ""};
    try {
      const auto tmpl = store_.templates().get(space.template_id);
      if (!tmpl) throw EngineError(EngineError::Kind::NotFound, "its template is gone");
      auto& target = place_spec(*tmpl, space_spec(space), &node);
      check_movable(space, target, true);
      d.to = target.name();
      const bool running = space.state == SpaceState::Running;
      if (running) stop_space(space.id);
      d.operation = enqueue_move(space, target);
      // Queued behind the move: it runs wherever the space is then (its first node if the move
      // failed, as a failed move leaves the space whole there).
      if (running) start_space(space.id);
    } catch (const std::exception& e) {
      d.error = e.what();
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace bowline::engine
