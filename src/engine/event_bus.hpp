// Every state change, progress step and failure: kept in the store (so a client that
// reconnects can catch up from a sequence number) and pushed to live listeners (the API's
// event stream).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "engine/event_kinds.hpp"
#include "store/store.hpp"

namespace bowline::engine {

class EventBus {
 public:
  using Listener = std::function<void(const store::Event&)>;
  explicit EventBus(store::Store& store) : store_(store) {}

  // Only the kinds of event_kinds.hpp: a kind is a constant there, never a string here.
  store::Event publish(const EventKind& kind, const std::optional<std::string>& space_id,
                       nlohmann::json payload);
  // Returns an id for unlisten(). Listeners run on the publishing thread: keep them short.
  int listen(Listener listener);
  void unlisten(int id);

 private:
  store::Store& store_;
  std::mutex mutex_;
  std::map<int, Listener> listeners_;
  int next_id_ = 1;
};

}  // namespace bowline::engine
