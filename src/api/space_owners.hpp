// Who owns which space, and with whom it is shared, remembered beyond the space's deletion: a
// user who deletes a space still follows the delete operation and sees the space.deleted
// event, although the row is gone by then. Fed by an EventBus listener that runs before any
// stream's listener (space.shared and space.unshared keep the shares up to date).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "engine/event_bus.hpp"
#include "store/store.hpp"

namespace bowline::api {

class SpaceOwners {
 public:
  // Learns every existing space's owner, then follows the event bus.
  SpaceOwners(store::Store& store, engine::EventBus& events);
  ~SpaceOwners();
  SpaceOwners(const SpaceOwners&) = delete;
  SpaceOwners& operator=(const SpaceOwners&) = delete;

  struct Known {
    std::optional<std::int64_t> owner;  // nullopt: an unclaimed pool member
  };
  // The store's word while the space exists, else the last owner seen; nullopt: never seen.
  std::optional<Known> lookup(const std::string& space_id);
  // Only what is remembered (no database access): for listeners on the publishing thread.
  std::optional<Known> remembered(const std::string& space_id) const;

  // The owner's, or a user's the space is shared with (any role).
  bool visible_to(const std::string& space_id, std::int64_t user_id) const;
  // Whether the space was shared with the user when last heard of (its owner excluded).
  bool shared_with(const std::string& space_id, std::int64_t user_id) const;

  // A user is gone (deleted, their spaces handed over): what was remembered as theirs is asked
  // of the store again, so that neither the heir's events nor the old spaces' history stay
  // tied to an id that belongs to nobody.
  void forget_owner(std::int64_t user_id);

 private:
  void learn(const store::Event& event);

  store::Store& store_;
  engine::EventBus& events_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Known> owners_;
  std::unordered_map<std::string, std::set<std::int64_t>> shared_;  // space id -> user ids
  int listener_ = 0;
};

}  // namespace bowline::api
