#include "api/space_owners.hpp"

#include <vector>

#include "engine/event_kinds.hpp"

namespace bowline::api {

SpaceOwners::SpaceOwners(store::Store& store, engine::EventBus& events)
    : store_(store), events_(events) {
  listener_ = events_.listen([this](const store::Event& e) { learn(e); });
  for (const auto& space : store_.spaces().list()) {
    std::lock_guard lock(mutex_);
    owners_[space.id] = Known{space.owner_id};
  }
  for (const auto& share : store_.shares().all()) {
    std::lock_guard lock(mutex_);
    shared_[share.space_id].insert(share.user_id);
  }
}

SpaceOwners::~SpaceOwners() {
  events_.unlisten(listener_);
}

void SpaceOwners::learn(const store::Event& event) {
  if (!event.space_id) return;
  const bool shared = event.kind == engine::event::kSpaceShared.name;
  if (shared || event.kind == engine::event::kSpaceUnshared.name) {
    const auto user = event.payload.find("userId");
    if (user == event.payload.end() || !user->is_number_integer()) return;
    std::lock_guard lock(mutex_);
    if (shared)
      shared_[*event.space_id].insert(user->get<std::int64_t>());
    else if (auto it = shared_.find(*event.space_id); it != shared_.end())
      it->second.erase(user->get<std::int64_t>());
    return;
  }
  {
    std::lock_guard lock(mutex_);
    const auto it = owners_.find(*event.space_id);
    // Owners change when a pool member is claimed (unowned until then), and an id is taken
    // anew by an import that keeps it: ask again only for those.
    if (it != owners_.end() && it->second.owner && event.kind != engine::event::kSpaceCreated.name)
      return;
  }
  std::optional<store::Space> space;
  try {
    space = store_.spaces().get(*event.space_id);
  } catch (...) {
    return;
  }
  if (!space) return;
  std::lock_guard lock(mutex_);
  owners_[space->id] = Known{space->owner_id};
}

std::optional<SpaceOwners::Known> SpaceOwners::lookup(const std::string& space_id) {
  if (auto space = store_.spaces().get(space_id)) {
    std::lock_guard lock(mutex_);
    return owners_[space->id] = Known{space->owner_id};
  }
  return remembered(space_id);
}

std::optional<SpaceOwners::Known> SpaceOwners::remembered(const std::string& space_id) const {
  std::lock_guard lock(mutex_);
  const auto it = owners_.find(space_id);
  if (it == owners_.end()) return std::nullopt;
  return it->second;
}

void SpaceOwners::forget_owner(std::int64_t user_id) {
  std::vector<std::string> theirs;
  {
    std::lock_guard lock(mutex_);
    for (auto& [space, users] : shared_) users.erase(user_id);  // their shares went with them
    for (auto it = owners_.begin(); it != owners_.end();) {
      if (it->second.owner && *it->second.owner == user_id) {
        theirs.push_back(it->first);
        it = owners_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const auto& id : theirs) lookup(id);  // spaces still there: their owner now
}

bool SpaceOwners::visible_to(const std::string& space_id, std::int64_t user_id) const {
  const auto known = remembered(space_id);
  return (known && known->owner && *known->owner == user_id) || shared_with(space_id, user_id);
}

bool SpaceOwners::shared_with(const std::string& space_id, std::int64_t user_id) const {
  std::lock_guard lock(mutex_);
  const auto it = shared_.find(space_id);
  return it != shared_.end() && it->second.count(user_id) > 0;
}

}  // namespace bowline::api
