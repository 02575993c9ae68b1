// Engine::refresh_keys: the owner's account in a running guest takes its keys anew when a share
// changes who may ssh in, rather than at the next start (for an ended share, that would leave
// the colleague's key in a guest they may still reach on its network).
#include "engine/engine.hpp"
#include "engine/event_kinds.hpp"

namespace bowline::engine {

using store::SpaceState;

void Engine::refresh_keys(const std::string& space_id) {
  executor_.submit(space_id, [this, id = space_id] {
    const auto space = store_.spaces().get(id);
    if (!space || !space->owner_id || space->state != SpaceState::Running) return;
    try {
      const auto l = load(*space);
      auto& node = node_of(*space);
      const auto on_node = node_space(l);
      node.personalise(on_node, "");  // same account, host name and password: new keys
      // The account running now is the one the seed describes: nothing pending for it.
      auto applied = nlohmann::json::parse(space->applied_parts, nullptr, false);
      if (const auto parts = node.parts(on_node);
          parts && parts->count("account") && applied.is_object() && applied.contains("account")) {
        applied["account"] = parts->at("account");
        store_.spaces().set_applied(id, space->applied_template_revision, applied.dump());
      }
      events_.publish(event::kSpaceKeys, id,
                      {{"now", true}, {"keys", l.guest_owner.ssh_keys.size()}});
    } catch (const std::exception& e) {
      events_.publish(event::kSpaceKeys, id, {{"now", false}, {"error", e.what()}});
    }
  });
}

}  // namespace bowline::engine
