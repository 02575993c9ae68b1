#include "api/space_roles.hpp"

namespace bowline::api {

std::optional<store::ShareRole> role_on(store::Store& store, const Caller& caller,
                                        const store::Space& space) {
  if (caller.admin() || (space.owner_id && *space.owner_id == caller.user.id))
    return store::ShareRole::Admin;
  if (!space.owner_id) return std::nullopt;  // an unclaimed pool member is nobody's to share
  return store.shares().role_of(space.id, caller.user.id);
}

bool at_least(store::ShareRole have, store::ShareRole need) {
  return static_cast<int>(have) >= static_cast<int>(need);
}

bool holds(store::Store& store, const Caller& caller, const store::Space& space,
           store::ShareRole need) {
  const auto role = role_on(store, caller, space);
  return role && at_least(*role, need);
}

std::string access_of(store::Store& store, const Caller& caller, const store::Space& space) {
  if (space.owner_id && *space.owner_id == caller.user.id) return "owner";
  if (caller.admin()) return "server-admin";
  const auto role = store.shares().role_of(space.id, caller.user.id);
  return role ? std::string("shared-") + store::to_string(*role) : "none";
}

}  // namespace bowline::api
