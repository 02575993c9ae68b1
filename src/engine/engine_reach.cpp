// Whether each node answers, asked at every audit before its spaces' drift checks. A node that
// does not answer keeps its spaces as they were: nothing is deleted, stopped or made elsewhere,
// each of its spaces says so (GET /api/v1/spaces/{id}: nodeUnreachable) and one node.state
// event tells of the change; once it answers again, the same audit's drift checks reconcile its
// spaces with what it has.
#include "engine/engine.hpp"
#include "engine/event_kinds.hpp"

namespace bowline::engine {

void Engine::check_reach() {
  for (auto* node : nodes_) {
    std::optional<std::string> why;
    try {
      why = node->unreachable();
    } catch (const std::exception& e) {
      why = e.what();
    }
    bool changed = false;
    {
      std::lock_guard lock(reach_mutex_);
      const auto it = unreachable_.find(node->name());
      changed = why ? it == unreachable_.end() : it != unreachable_.end();
      if (why)
        unreachable_[node->name()] = *why;
      else if (it != unreachable_.end())
        unreachable_.erase(it);
    }
    if (!changed) continue;
    nlohmann::json payload{{"node", node->name()}, {"state", why ? "unreachable" : "ready"}};
    if (why) payload["reason"] = *why;
    events_.publish(event::kNodeState, std::nullopt, payload);
  }
}

std::optional<std::string> Engine::node_unreachable(const std::string& node) const {
  const auto& name = node.empty() && !nodes_.empty() ? nodes_.front()->name() : node;
  std::lock_guard lock(reach_mutex_);
  const auto it = unreachable_.find(name);
  if (it == unreachable_.end()) return std::nullopt;
  return it->second;
}

}  // namespace bowline::engine
