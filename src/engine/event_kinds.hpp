// Every kind of event the engine publishes, with its payload: one list for the engine (which
// can publish nothing else: EventBus::publish takes an EventKind), the API (GET
// /api/v1/event-kinds and /ui/event-kinds.js for the web UI), the CLI and docs/api.md (a test
// checks that the page lists each).
#pragma once

#include <string_view>
#include <vector>

namespace bowline::engine {

struct EventKind {
  std::string_view name;     // "space.state"
  std::string_view payload;  // what the payload holds, for people
};

namespace event {

// A space's life.
inline constexpr EventKind kSpaceCreated{"space.created",
                                         "{name, domain}: recorded; its create operation follows"};
inline constexpr EventKind kSpaceState{
    "space.state", "{state, error?}: the space's state changed (error: why it is in error)"};
inline constexpr EventKind kSpaceDeleted{"space.deleted",
                                         "{name}: gone, with its domain and disks"};
inline constexpr EventKind kSpaceIp{"space.ip", "{ip}: a stopped bridged space got a new address"};
inline constexpr EventKind kSpaceRestart{
    "space.restart", "{reason}: the engine starts a space again (runStrategy Always, a crash)"};
inline constexpr EventKind kSpaceExternal{
    "space.external",
    "{address, ports: [{protocol, hostPort, guestPort}]} or {error}: external ports forwarded, "
    "or why not"};
inline constexpr EventKind kSpaceMoved{
    "space.moved",
    "{from, to}: the space's disk is on node `to` now; its next start runs it there"};
inline constexpr EventKind kSpaceClaimed{"space.claimed",
                                         "{pool, owner, name}: a pool member became a space"};
inline constexpr EventKind kSpacePersonalised{
    "space.personalised", "{owner}: a claimed member was set up for its owner in place"};
inline constexpr EventKind kSpacePersonaliseFailed{
    "space.personalise_failed", "{error}: the guest agent could not; the claim restarts it"};
inline constexpr EventKind kSpaceShared{
    "space.shared",
    "{user, userId, role}: the owner shared the space with a user, or changed their role"};
inline constexpr EventKind kSpaceUnshared{"space.unshared",
                                          "{user, userId}: a user's share of the space ended"};
inline constexpr EventKind kSpaceKeys{
    "space.keys",
    "{now, keys?, error?}: who may ssh in changed; now: the running guest has the keys already "
    "(keys: how many), else they reach it at its next start (error: why not now)"};
inline constexpr EventKind kDomainLifecycle{
    "domain.lifecycle",
    "{event}: what libvirt said of the space's domain (\"stopped (shutdown)\")"};

// A space's state kept.
inline constexpr EventKind kSnapshotCreated{
    "snapshot.created",
    "{name, memory, bestEffort, sizeBytes, bestEffortReason?, warning?}: a snapshot was taken "
    "(bestEffort: filesystems not frozen, bestEffortReason: why; warning: not thawed after)"};
inline constexpr EventKind kSnapshotRestored{
    "snapshot.restored", "{name, memory}: the space's disks (and memory) are the snapshot's again"};
inline constexpr EventKind kSnapshotDeleted{"snapshot.deleted", "{name}: a snapshot was removed"};
inline constexpr EventKind kSpaceCloned{
    "space.cloned", "{source, snapshot, full}: the new space's disk is a copy of the source's"};
inline constexpr EventKind kSpaceSuspended{
    "space.suspended", "{reason}: its memory is saved to disk and its machine let go"};
inline constexpr EventKind kSpaceResumed{
    "space.resumed", "{reason, seconds}: it runs again where it was (reason: what woke it)"};

// Operations (long work with progress).
inline constexpr EventKind kOperationStarted{
    "operation.started",
    "{operation, kind, resumed?}: queued and started (resumed: after a restart)"};
inline constexpr EventKind kOperationProgress{
    "operation.progress", "{operation, step, progress, bytes?, total?}: a step, 0-100%"};
inline constexpr EventKind kOperationSucceeded{"operation.succeeded", "{operation, kind}: done"};
inline constexpr EventKind kOperationFailed{"operation.failed",
                                            "{operation, kind, error}: failed, and why"};

// Pools.
inline constexpr EventKind kPoolCreated{"pool.created", "{pool, template, size}"};
inline constexpr EventKind kPoolDeleted{"pool.deleted", "{pool}"};
inline constexpr EventKind kPoolMember{"pool.member", "{pool, member}: a new member is made"};
inline constexpr EventKind kPoolError{"pool.error",
                                      "{pool or pool_id, error}: the pool cannot make members"};

// What the reconciler found.
inline constexpr EventKind kReconcileError{
    "reconcile.error", "{error}: a check of the store against the nodes failed"};
inline constexpr EventKind kReconcileOrphan{
    "reconcile.orphan",
    "{domain, space} or {directory}: made by bowline, known to no space; reported, never deleted"};

// The nodes.
inline constexpr EventKind kNodeState{
    "node.state",
    "{node, state, reason?}: a node stopped answering (unreachable, with why: its spaces are kept "
    "as they were), answers again (ready: its spaces are checked against it), or was cordoned or "
    "uncordoned"};

// The host's firewall.
inline constexpr EventKind kFirewallRestored{
    "firewall.restored",
    "{table, reason}: a table of bowline's (the guest guard's, the external ports') had gone or "
    "been damaged, and was written again"};

}  // namespace event

// Every kind above, in that order.
const std::vector<EventKind>& event_kinds();

}  // namespace bowline::engine
