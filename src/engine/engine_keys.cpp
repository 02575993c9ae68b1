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
      // Writes the account (keys, password) and the host name as the template has them now.
      node.personalise(on_node, "");
      // What runs now is what the seed describes for both: nothing pending for them.
      auto applied = nlohmann::json::parse(space->applied_parts, nullptr, false);
      const auto parts = node.parts(on_node);
      if (parts && applied.is_object()) {
        for (const char* part : {"account", "hostname"})
          if (parts->count(part) && applied.contains(part)) applied[part] = parts->at(part);
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
