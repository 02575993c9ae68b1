#include "engine/event_kinds.hpp"

namespace bowline::engine {

const std::vector<EventKind>& event_kinds() {
  using namespace event;
  static const std::vector<EventKind> kinds{kSpaceCreated,       kSpaceState,
                                            kSpaceDeleted,       kSpaceIp,
                                            kSpaceRestart,       kSpaceExternal,
                                            kSpaceMoved,         kSpaceClaimed,
                                            kSpacePersonalised,  kSpacePersonaliseFailed,
                                            kSpaceShared,        kSpaceUnshared,
                                            kSpaceKeys,          kDomainLifecycle,
                                            kSnapshotCreated,    kSnapshotRestored,
                                            kSnapshotDeleted,    kSpaceCloned,
                                            kSpaceSuspended,     kSpaceResumed,
                                            kOperationStarted,   kOperationProgress,
                                            kOperationSucceeded, kOperationFailed,
                                            kPoolCreated,        kPoolDeleted,
                                            kPoolMember,         kPoolError,
                                            kReconcileError,     kReconcileOrphan,
                                            kNodeState,          kFirewallRestored};
  return kinds;
}

}  // namespace bowline::engine
