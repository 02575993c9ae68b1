// What a user may do with a space that is not theirs: a share's role, three levels, each
// holding the ones below it.
//   viewer: the space's record, stats, snapshot list, events, console output, display (view
//           only: keys and pointer are dropped)
//   user:   also ssh, forward, the terminal, console input, start, stop, restart, suspend
//   admin:  also changes: its address, snapshots, restore, clone, export, delete, disks made
//           from it
// Its owner and server admins hold every level. Sharing itself stays with them: a share's
// admin cannot hand the space on.
#pragma once

#include <optional>
#include <string>

#include "api/router.hpp"
#include "store/store.hpp"

namespace bowline::api {

// The caller's level on `space`: Admin for its owner and for server admins, else the role of
// the caller's share; nullopt when the space is not theirs to see.
std::optional<store::ShareRole> role_on(store::Store& store, const Caller& caller,
                                        const store::Space& space);

bool at_least(store::ShareRole have, store::ShareRole need);
// Whether the caller holds `need` on `space`.
bool holds(store::Store& store, const Caller& caller, const store::Space& space,
           store::ShareRole need);

// How the caller holds the space, for GET /spaces/{id}'s "access": "owner", "server-admin",
// or "shared-viewer", "shared-user", "shared-admin".
std::string access_of(store::Store& store, const Caller& caller, const store::Space& space);

}  // namespace bowline::api
