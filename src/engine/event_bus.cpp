#include "engine/event_bus.hpp"

namespace bowline::engine {

store::Event EventBus::publish(const EventKind& kind, const std::optional<std::string>& space_id,
                               nlohmann::json payload) {
  // One lock around append and delivery keeps listeners seeing events in sequence order.
  std::lock_guard lock(mutex_);
  auto event = store_.events().append(kind.name, space_id, std::move(payload));
  for (auto& [id, listener] : listeners_) {
    try {
      listener(event);
    } catch (...) {
      // A broken listener (a closed connection) must not stop the others.
    }
  }
  return event;
}

int EventBus::listen(Listener listener) {
  std::lock_guard lock(mutex_);
  listeners_[next_id_] = std::move(listener);
  return next_id_++;
}

void EventBus::unlisten(int id) {
  std::lock_guard lock(mutex_);
  listeners_.erase(id);
}

}  // namespace bowline::engine
