// The engine: spaces' lifecycle on its nodes (node.hpp: libvirt connections, a KubeVirt
// cluster). It owns state and order (the store says what a space should be, its node what it
// is), addresses, host ports and pools; the nodes own side effects. Long operations run in the
// background; every step, state change and failure is an event, and a failure also stays on
// the space (state error, with the reason).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/disk_files.hpp"
#include "engine/engine_error.hpp"
#include "engine/event_bus.hpp"
#include "engine/executor.hpp"
#include "engine/idle_watch.hpp"
#include "engine/node.hpp"
#include "engine/port_forwards.hpp"
#include "engine/quota.hpp"
#include "engine/readiness.hpp"
#include "engine/space_access.hpp"
#include "engine/stats_sampler.hpp"
#include "engine/usage_memo.hpp"
#include "plan/change_parts.hpp"
#include "spec/expand.hpp"
#include "spec/spec.hpp"
#include "store/disks.hpp"
#include "store/downloads.hpp"
#include "store/snapshots.hpp"
#include "store/store.hpp"
#include "util/timer.hpp"

namespace bowline::engine {

struct EngineSettings {
  // How often the store is compared with libvirt after the start-up pass (0: only at start).
  std::chrono::seconds reconcile_interval{60};
  // Workers for operations: `workers` always, more while every one is busy (a space whose
  // operation is stuck holds one, never the others' turn), up to `max_workers`.
  unsigned workers = 4;
  unsigned max_workers = 64;
  // Host ports that publish external NAT spaces' guest ports (server.external_ports).
  std::uint16_t external_port_first = 20000;
  std::uint16_t external_port_last = 29999;
  // The host address they are published on (server.external_address; "any": every one).
  std::string external_address;
  // How long a started NAT space may take to get its DHCP lease before its ports are published.
  std::chrono::seconds address_timeout{180};
  spec::Variables server_variables;  // server.url and var.* for templates
  // Events and finished operations older than these are dropped by the periodic audit (the
  // store would otherwise grow with every keystroke of activity, for ever).
  std::chrono::hours event_retention{24 * 7};
  std::chrono::hours operation_retention{24 * 30};
  // What a user may hold where their own quota says nothing (server.quota.*); unset or
  // negative: no limit.
  store::Quota default_quota;
  // What the engine waits with (a guest's address, the audit's interval); unset: real time.
  // It must outlive the engine.
  util::Timer* timer = nullptr;
  // How often what each space uses is sampled, and for how long it is kept (server.stats.*).
  StatsSettings stats;
  // When idle spaces are suspended (server.idle.*); each stats round looks.
  IdleSettings idle;
  // Ready pool members wait suspended (server.pools.wait); each stats round looks.
  bool pools_wait_suspended = true;
  // Where a move's files wait on the server between two nodes (unset: the system's temporary
  // directory).
  std::filesystem::path spool_dir;
  // This host's IPv4 addresses, which no bridged space is given; unset: its interfaces now.
  std::function<std::set<std::uint32_t>()> host_addresses;
  // Where the whole text of a failure goes when what users read of it was shortened (host
  // paths left out); unset: nowhere.
  std::function<void(const std::string&)> log;
};

struct CreateSpaceRequest {
  std::int64_t owner_id = 0;
  std::string template_name;
  std::string name;
  std::optional<std::string> ip;  // bridged: a chosen address instead of the next free one
  bool start = true;
};

struct Accepted {
  store::Space space;
  std::int64_t operation_id = 0;
};

// A guest port of the space published on a port of the host (template external: PortList).
struct ExternalPort {
  std::string protocol;
  std::uint16_t host_port = 0;
  std::uint16_t guest_port = 0;
  bool active = false;  // forwarded right now
  std::string address;  // of the host, where it is published; "" on every address
};

struct SpaceView {
  store::Space space;
  std::string owner;
  std::string template_name;
  std::int64_t template_revision = 0;
  bool redefine_pending = false;  // the template changed since the domain was defined
  // What changed (template, owner) since the last start, and when each change arrives.
  std::vector<plan::PendingChange> pending;
  std::vector<ExternalPort> external_ports;
  std::string external_error;          // why they are not forwarded, when publishing failed
  std::optional<std::string> address;  // the lease (bridged) or what libvirt reports (nat)
  Readiness readiness;
  bool readiness_known = true;  // false: the node has no console log to read it from
  // Idle suspend: after how long idle it is suspended (0: never), and for how long it has
  // been idle (a running space the watch has seen idle).
  std::chrono::seconds idle_after{0};
  std::optional<std::chrono::seconds> idle_for;
};

// How a claimed pool member became its owner's.
enum class ClaimMethod {
  Agent,   // booted member, personalised in place through the QEMU guest agent: no reboot
  Reboot,  // booted member without a usable agent: restarted with the owner's seed
  Boot     // stopped member: started with the owner's seed
};
const char* to_string(ClaimMethod method);

struct Claimed {
  store::Space space;
  ClaimMethod method = ClaimMethod::Agent;
  std::optional<std::int64_t> operation;  // the restart or start, when not Agent
  std::string agent_problem;              // why the agent could not do it, when Reboot
};

// bowline disk create: exactly one of image, size (with image: grown to it), from_space (with
// snapshot: as that snapshot has it), from_disk. A user names images, disks and snapshots,
// never host files: an image path is taken only from an admin (may_name_paths), and then only
// under server.kvm.import_paths (image/cache.hpp).
struct CreateDiskRequest {
  std::int64_t owner_id = 0;
  std::string name;
  std::optional<spec::Image> image;
  std::optional<std::uint64_t> size_bytes;
  std::optional<std::string> from_space;  // a space id: a flattened copy of its boot disk
  std::optional<std::string> snapshot;    // with from_space: one of its snapshots, by name
  std::optional<std::string> from_disk;   // another disk of the same owner, copied
  bool may_name_paths = false;            // the caller is an admin
};

// A disk and the spaces whose templates name it (their owner's disk of that name).
struct DiskView {
  store::Disk disk;
  std::string owner;
  std::vector<store::Space> spaces;
};

// Who a machine is: its id (instance-id, MACs), SMBIOS/domain UUID and SSH host key pair. An
// import keeps it (--keep-identity) or the new space gets its own.
struct SpaceIdentity {
  std::string id;
  std::string uuid;
  std::string host_key;
  std::string host_key_public;
};

// What an export streams (space_export.hpp): a stopped space's boot disk and its facts.
struct ExportSource {
  std::string space_json;  // archive::kSpaceMember
  std::string template_yaml;
  std::filesystem::path disk;
  std::string space_name;
};

// An import whose archive has been checked against its manifest (space_archive.hpp).
struct ImportRequest {
  std::int64_t owner_id = 0;
  std::string name;
  std::string template_name;              // an existing template of this server
  std::optional<SpaceIdentity> identity;  // keep the archived one
  std::filesystem::path staged_disk;      // moved into place (or removed on failure)
};

// bowline space clone: a new space of the source's template whose boot disk is the source's at
// a snapshot (or now), as an overlay on the same base image or a standalone copy (`full`).
struct CloneRequest {
  std::string source_id;
  std::int64_t owner_id = 0;
  std::string name;
  std::optional<std::string> snapshot;  // none: the source as it is now
  bool full = false;
};

class Engine : public SpaceAccess {
 public:
  Engine(store::Store& store, EventBus& events, EngineSettings settings);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // A node, before start(); it must outlive the engine. The first is the default: spaces
  // created without a node and pool members go there.
  void add_node(Node& node);
  const std::vector<Node*>& nodes() const { return nodes_; }
  // What each space uses (stats_sampler.hpp); sampling runs from start() on.
  StatsSampler& stats() { return *stats_; }
  // What publishes external NAT spaces' ports (nftables in the server), before start(); without
  // one, such spaces are refused at create. It must outlive the engine.
  void set_port_forwarder(PortForwarder& forwarder) { forwarder_ = &forwarder; }
  // Watches the nodes' lifecycle events and reconciles the store with the nodes.
  void start();
  // Where disk objects' files are made (engine_disks.cpp), before start(); without it disk
  // create is refused. It must outlive the engine.
  void set_disk_files(DiskFiles& files) { disk_files_ = &files; }
  DiskFiles* disk_files() { return disk_files_; }

  // Disks as objects (engine_disks.cpp). Errors name the rule (EngineError kinds: 404, 409,
  // 422, 403 for the quota).
  store::Disk create_disk(const CreateDiskRequest& request);
  // Every disk (no owner) or an owner's, with the spaces that name each.
  std::vector<DiskView> list_disks(std::optional<std::int64_t> owner_id);
  DiskView disk_info(std::int64_t owner_id, const std::string& name);
  // Refused (Conflict) while a space names it: deleting the space keeps the disk.
  void delete_disk(std::int64_t owner_id, const std::string& name);
  // A disk made from a file staged by an import (export_import.cpp), within the quota.
  store::Disk adopt_disk(std::int64_t owner_id, const std::string& name,
                         const std::filesystem::path& staged, const std::string& source);
  // Export and import (space_transfer.cpp). Export: a stopped space on a libvirt node.
  ExportSource export_source(const std::string& space_id);
  // Makes the space from the staged disk and starts it; nothing is left when it is refused
  // (identity in use, name taken, quota, missing template).
  Accepted import_space(const ImportRequest& request);

  // The files of the space's spec.disks in order; NotFound naming the first missing disk.
  std::vector<std::string> resolve_disks(const store::Space& space, const spec::Spec& spec);
  // The boot disk of a stopped libvirt space (its overlay, or disks[0]'s file).
  std::filesystem::path boot_disk_of(const store::Space& space);

  // Snapshots (engine_snapshots.cpp): operations on the space's queue. Taking or deleting one
  // that fails fails its operation and leaves the space as it was. Errors name the rule.
  std::vector<store::Snapshot> snapshots_of(const std::string& space_id);
  std::int64_t snapshot_space(const std::string& id, const std::string& name, bool memory);
  // Refused (Conflict) while the space runs, unless `stop`: it is stopped first and, when the
  // snapshot holds no memory, started again from the restored disks afterwards.
  std::int64_t restore_space(const std::string& id, const std::string& name, bool stop);
  std::int64_t delete_snapshot(const std::string& id, const std::string& name);
  // A new space from another's disk (engine_clone.cpp), started; its identity (instance-id,
  // MAC, address, host keys, machine-id) is its own. The source keeps running.
  Accepted clone_space(const CloneRequest& request);

  // `node`: a node given to add_node; empty: the default one.
  Accepted create_space(const CreateSpaceRequest& request, const std::string& node = {});
  std::int64_t start_space(const std::string& id);
  std::int64_t stop_space(const std::string& id);
  std::int64_t restart_space(const std::string& id);
  std::int64_t delete_space(const std::string& id);
  // Only while stopped; the guest gets the address at its next boot.
  void set_ip(const std::string& id, const std::string& ip);

  // Suspend and resume (engine_suspend.cpp). Suspend: a running space on a node that can
  // (libvirt: managed save) is saved and its machine let go; `reason` is shown with it. A
  // failure fails the operation and leaves the space running. A start resumes a suspended space
  // (resume_space), a stop discards its saved state.
  // `waiting_member`: a pool member waiting for its claim, left as it is once claimed.
  // Moves a stopped space to the node `to` (engine_move.cpp): its disk (and NVRAM) are copied
  // there, then removed from its first node, and its next start defines it there. Refused
  // while it runs, has snapshots or boots from a disk object; a failure leaves it whole where
  // it was. Returns the operation.
  std::int64_t move_space(const std::string& id, const std::string& to);
  // A cordoned node takes no new space: placement passes it over, a create or move naming it
  // is refused (engine_cordon.cpp). Its spaces stay and run. Kept in the store.
  void cordon(const std::string& node, bool cordoned, const std::string& reason = {});
  // Why the node is cordoned; nullopt when it is not.
  std::optional<std::string> cordoned(const std::string& node);
  // Cordons the node and moves each of its spaces to another node (placed as a create is): a
  // stopped one as it is, a running one stopped first and started again there. Returns the
  // moves, one per space, or why a space stays.
  struct Drained {
    std::string space_id, space_name;
    std::string to;              // the node it moves to
    std::int64_t operation = 0;  // its move (0: not moved)
    std::string error;           // why not
  };
  std::vector<Drained> drain(const std::string& node);
  std::int64_t suspend_space(const std::string& id, const std::string& reason,
                             bool waiting_member = false);
  std::int64_t resume_space(const std::string& id, const std::string& why);
  // One look for idle spaces (after each stats round; tests call it themselves).
  void suspend_idle();
  // Ready pool members that wait running are suspended (when the settings say so).
  void suspend_waiting_members();
  IdleWatch& idle() { return idle_; }

  // Pools keep `size` members of a NAT template booted and unowned; a claim hands one to a
  // user at once and the pool makes a new one.
  store::Pool create_pool(const std::string& name, const std::string& template_name,
                          std::int64_t size);
  // Deletes the pool and its unclaimed members (claimed ones are their owners').
  void delete_pool(const std::string& name);
  Claimed claim(const std::string& pool_name, std::int64_t owner_id, const std::string& name);
  // Who may ssh into the space changed (a share given, changed or ended): a running guest gets
  // the owner's account's keys anew through its guest agent, so an ended share's key stops
  // working now; otherwise they reach it at its next start. In the background, after what the
  // space is doing; the outcome is a space.keys event.
  void refresh_keys(const std::string& space_id);
  // Makes the members the pool lacks (in the background).
  void replenish(std::int64_t pool_id);
  // Refuses (Conflict) a new YAML for a template that a pool uses and could not take.
  void check_template_update(const store::Template& tmpl, const std::string& yaml);

  SpaceView describe(const std::string& id);
  // Compares the store with the nodes; what a node reports wins. Reports what it cannot fix.
  // At start-up it also finishes the operations a stopped server left behind.
  void reconcile();
  // The periodic pass: each space is checked on its own queue, after whatever operation it
  // is in, so a check never sees an operation's half-way state.
  void audit();
  // Why the node `node` (empty: the first) did not answer at the last audit; nullopt while it
  // answers (engine_reach.cpp).
  std::optional<std::string> node_unreachable(const std::string& node) const;
  // Drops events and finished operations past their retention (part of the audit).
  void prune_history();
  // Blocks until background work is done (tests, shutdown).
  void wait_idle();

  // The spec of a space's template with the space's values (for render and checks).
  spec::Spec space_spec(const store::Space& space);

  // Quotas (engine_quota.cpp): the limits in effect for a user, and what they hold now (every
  // space they own, whatever its state, until it is gone), as committed (the store's reader).
  Limits limits_of(const store::User& user) const;
  Usage usage_of_owner(std::int64_t owner_id);
  std::map<std::int64_t, Usage> usage_by_owner();  // every owner's, in one pass
  // The disk a user may still take (their disk limit less what they hold), in bytes;
  // UINT64_MAX without a limit. What an import's stream is cut off at.
  std::uint64_t disk_room(std::int64_t owner_id);
  // Hands every space of `from` to `to` (user delete --transfer-to), all or none, in one
  // transaction: EngineError Conflict when `to` has a space of the same name or one of them
  // is in an operation, Forbidden when they would take `to` over their quota. The guest's
  // account becomes the new owner's at each space's next start (a pending "account" change).
  // Returns the names of the spaces handed over.
  std::vector<std::string> transfer_spaces(std::int64_t from_id, std::int64_t to_id);

  // SpaceAccess (space_access.cpp).
  std::unique_ptr<util::ByteStream> open_console(const std::string& space_id) override;
  int open_display(const std::string& space_id) override;
  int open_port(const std::string& space_id, std::uint16_t port) override;
  std::unique_ptr<util::TerminalStream> open_terminal(const std::string& space_id, unsigned cols,
                                                      unsigned rows) override;
  // Whether the running space's sshd answers on port 22 now (engine/sshd_probe.hpp): "open"
  // (it sent its SSH identification line), "no banner" (a connection, but no SSH there),
  // "closed" (refused), "no route" (no answer within half a second), "no address" (no DHCP
  // lease yet), "unavailable" (the node cannot reach it) or "not running". Waits on the
  // guest for 2.5 s at most: never on an HTTP worker.
  std::string ssh_port_state(const std::string& space_id);
  void wake(const std::string& space_id, const std::string& why) override;
  std::shared_ptr<void> hold(const std::string& space_id) override;

  // The addresses of running spaces whose address only their node knows (NAT), by space id,
  // for the list of spaces (learned_addresses.cpp): one pass over each node's DHCP leases,
  // kept for a second so that a burst of lists costs one pass. The same map (pointer) until
  // an address changes.
  using AddressMap = std::map<std::string, std::string>;
  std::shared_ptr<const AddressMap> learned_addresses();

 private:
  // A space with everything it is made from.
  struct Loaded {
    store::Space space;
    store::Template tmpl;
    store::User owner;
    spec::Spec spec;
    plan::Owner guest_owner;  // the owner as the guest sees them ("pool" while unclaimed)
  };
  Loaded load(const store::Space& space);
  NodeSpace node_space(const Loaded& loaded);
  std::vector<plan::PendingChange> pending_of(const store::Space& space);
  // How long the space may sit idle (its template's idleSuspend or the server's default).
  std::chrono::seconds idle_limit(const spec::Spec& spec) const;
  void describe_idle(SpaceView& view);
  // Blocks until operation `op` ends; EngineError (Conflict) when it failed or took too long.
  void wait_for_operation(std::int64_t op, std::chrono::seconds timeout, const std::string& what);
  static std::string applied_parts(const store::Space& space,
                                   const std::map<std::string, std::string>& parts);
  // A new cloud-init instance-id for the start about to run when the template's cloudInit
  // changed since the last start (recorded, and set in `l`).
  void renew_instance(Loaded& l, Node& node);
  Accepted make_space(const std::optional<store::User>& owner, std::optional<std::int64_t> pool_id,
                      const store::Template& tmpl, const std::string& name,
                      const std::optional<std::string>& ip, bool start, Node& node,
                      const SpaceIdentity* identity = nullptr,
                      std::function<void(const std::string& id, std::int64_t op)> prepare = {});
  void admit(Node& node, const store::Space& probe, const spec::Spec& spec,
             const std::optional<std::string>& ip, bool start_now);
  void refuse_unrunnable(Node& node, const spec::Spec& spec, const std::string& template_name);
  store::Space insert_space(const store::NewSpace& fresh, const spec::Spec& spec, Node& node,
                            const std::optional<std::string>& ip);
  // EngineError (Forbidden) when the space `space_id` of `spec` takes its owner over their
  // quota, counted over their other spaces. Run inside the transaction that writes the space.
  void check_quota(std::int64_t owner_id, const std::string& space_id, const spec::Spec& spec);
  // What `spaces` hold, by owner, reading their templates and owners (each once) from
  // `templates` and `users`: the writer's connection inside a create's transaction (it must
  // see what that transaction sees), the reader's for what a request shows (so it never waits
  // for the engine's writes).
  std::map<std::int64_t, Usage> count_usage(const std::vector<store::Space>& spaces,
                                            store::TemplateRepository& templates,
                                            store::UserRepository& users,
                                            store::SnapshotRepository& snapshots);
  // space_spec with the template and owner already read.
  spec::Spec expand_spec(const store::Space& space, const store::Template& tmpl,
                         const std::optional<store::User>& owner) const;
  // A claim's member, taken for `owner` under `name` with the quota checked, in one
  // transaction; EngineError when none is ready or the quota refuses.
  store::Space take_member(const store::Pool& pool, const store::User& owner,
                           const std::string& name);
  std::optional<store::Space> pick_member(const store::Pool& pool, const store::User& owner,
                                          const std::string& name);
  void fill_pool(std::int64_t pool_id);
  static std::optional<std::string> pool_template_problem(const spec::Spec& spec,
                                                          const std::string& template_name);
  // `failure_is_error`: a failure puts the space in state error (the work may have left it
  // half-way); without, the operation fails and the space stays as it is.
  std::int64_t enqueue(const store::Space& space, const std::string& kind,
                       std::function<void(std::int64_t)> body, bool failure_is_error = true);
  // Operations a stopped server left unfinished (reconcile.cpp). The newest one of a space is
  // adopted by the operation that continues its work (the next enqueue for that space), so a
  // client waiting on it sees it end; the others end as superseded, or as interrupted when
  // nothing continues them.
  using Unfinished = std::map<std::string, std::vector<store::Operation>>;
  Unfinished unfinished_operations();
  void adopt(const std::string& space_id, std::vector<store::Operation>& operations);
  void end_interrupted(std::vector<store::Operation>& operations, const std::string& why);
  std::optional<std::int64_t> take_adopted(const std::string& space_id);
  void reconcile_space(const store::Space& space, std::vector<store::Operation>& operations);
  // A restore the server left unfinished (engine_snapshots.cpp); false when the newest
  // operation is no restore.
  bool reconcile_restore(const store::Space& space, std::vector<store::Operation>& operations);
  // After a snapshot or a snapshot's deletion that a stopped server cut short: the node's
  // snapshots and the store's rows are made the same again (snapshots the store never
  // recorded go; rows whose snapshot libvirt deleted go).
  void reconcile_snapshots(const store::Space& space,
                           const std::vector<store::Operation>& operations);
  // The share of an operation's progress (0-100) one step of it reports in.
  struct Stage {
    std::int64_t operation = 0;
    int from = 0, to = 100;
    int at(int percent) const { return from + percent * (to - from) / 100; }
  };
  // How a bring up goes: run the machine or only make it, a create's first, or a restart.
  struct Bring {
    bool run = true;
    bool first = false;  // a failure undoes everything the space has on its node
    bool restart = false;
  };
  void bring_up(const std::string& id, Stage stage, Bring how);
  Progress progress_for(const Stage& stage, const std::string& id);
  // What a create that failed made on the node, its address and the row's address go.
  void undo_create(const store::Space& space, Node& node);
  void set_state(const std::string& id, store::SpaceState state, const std::string& error = {});
  // The space's state from what its node reports at the end of an operation.
  void settle(const std::string& id, const Observation& seen);
  // The one place an operation's progress is recorded (and published): never below what the
  // operation already reached (store::OperationRepository::progress), so its events and the
  // operation's row only go forward. A download's share carries its bytes too.
  void progress(std::int64_t operation, const std::string& id, const std::string& step, int percent,
                std::optional<std::pair<std::uint64_t, std::uint64_t>> bytes = {});
  void progress(const Stage& stage, const std::string& id, const std::string& step, int percent) {
    progress(stage.operation, id, step, stage.at(percent));
  }
  void on_machine_event(Node& node, const MachineEvent& event);
  void after_machine_event(const std::string& id, MachineState state, bool crash);
  void check_drift(const store::Space& space);
  void queue_drift_check(const std::string& id);
  void settle_interrupted(const store::Space& space, std::optional<std::int64_t> operation);
  void settle_from_node(const store::Space& space, std::vector<store::Operation>& operations);
  void report_orphans();
  void audit_loop();
  store::Space require(const std::string& id);
  store::Space with_terminal_key(store::Space space);
  // The space's node (an empty node name is the default node's); EngineError when the server
  // no longer has it.
  Node& node_of(const store::Space& space);
  Node* find_node(const std::string& name);
  Node& node_named(const std::string& name);
  // The node a new space of `tmpl` goes to when its create names none: the one with the most
  // free memory among those that can run it (engine_placement.cpp); the reasons of each when
  // none can.
  Node& place_space(const store::User& owner, const store::Template& tmpl, const std::string& name);
  // The same for a space's `spec`, on any node but `not_on` (a drain's).
  Node& place_spec(const store::Template& tmpl, const spec::Spec& spec, const Node* not_on);
  // Why `space` cannot move to `target` now (EngineError); `stopped_first`: a running one may,
  // as a stop is queued before its move (a drain's).
  void check_movable(const store::Space& space, Node& target, bool stopped_first);
  std::int64_t enqueue_move(const store::Space& space, Node& target);
  // Throws when `node` is cordoned (a create or move naming it).
  void refuse_cordoned(const Node& node);
  bool on_node(const store::Space& space, const Node& node) const;
  // The other spaces on the space's node that hold its CPUs and devices now.
  std::vector<store::Space> neighbours(const store::Space& space);
  void check_devices_free(const store::Space& space, const spec::Spec& spec);
  // Two running spaces never write one disk: Conflict naming the other space.
  void check_disks_free(const store::Space& space, const spec::Spec& spec);
  // The owner's spaces whose templates name the disk.
  std::vector<store::Space> disk_users(std::int64_t owner_id, const std::string& name);
  DiskView view_of(const store::Disk& disk);
  // Snapshots (engine_snapshots.cpp): the space's snapshot of that name, or NotFound.
  store::Snapshot require_snapshot(const store::Space& space, const std::string& name);
  // Conflict while a clone reads the space's disk (engine_clone.cpp): `what` is refused.
  void refuse_while_cloned(const store::Space& space, const std::string& what);
  store::Space cloneable_source(const CloneRequest& request);
  void drop_clone_points(const store::Space& space);
  void check_disk_quota(std::int64_t owner_id, std::uint64_t bytes);
  // Keeps the virtual size of the space's own disk as its node made it (quota.hpp's usage).
  void record_disk_size(const store::Space& space);
  // Charges a download the work just made to `owner` (`was_here`: it was cached before).
  void charge_download(const std::optional<std::int64_t>& owner, const spec::Image& image,
                       bool was_here);
  // Takes `name` among the owner's disks until the result goes (Conflict when a disk has it
  // or is being made with it): a create holds it while its file is made.
  std::shared_ptr<void> hold_disk_name(const store::User& owner, const std::string& name);
  std::pair<std::uint64_t, std::string> make_disk_file(const store::User& owner,
                                                       const std::filesystem::path& file,
                                                       const CreateDiskRequest& request);
  // External ports (external_ports.cpp): held for the space's life, forwarded while it runs.
  bool publishes_ports(const store::Space& space, const spec::Spec& spec);
  void allocate_ports(const store::Space& space, const spec::Spec& spec);
  void publish_ports(const std::string& id);   // queues it until the guest has its address
  void withdraw_ports(const std::string& id);  // at a stop or delete
  void apply_forwards_locked();                // with forwards_mutex_ held
  void publisher_loop();
  void keep_forwards();
  bool try_publish(const std::string& id, std::uint64_t generation, bool last_try);

  store::Store& store_;
  EventBus& events_;
  EngineSettings settings_;
  util::Timer& timer_;
  std::vector<Node*> nodes_;  // set before start(); the first is the default
  DiskFiles* disk_files_ = nullptr;
  // The disks table (store/disks.hpp), on the store's connection: part of its transactions.
  store::DiskRepository& disk_rows_ = store_.disks();
  store::SnapshotRepository& snapshot_rows_ = store_.snapshots();
  store::DownloadRepository& download_rows_ = store_.downloads();
  std::mutex progress_mutex_;  // recorded and published in one order
  std::mutex clones_mutex_;
  std::mutex claims_mutex_;            // a claim's pick against a waiting member's suspend
  std::map<std::string, int> cloned_;  // source space id -> clones reading its disk now
  std::mutex disks_mutex_;  // one disk create or delete at a time: the name check and the file
  // Disks whose file is being made (owner, name), under disks_mutex_: their names are taken.
  std::set<std::pair<std::int64_t, std::string>> disks_being_made_;
  // Asks each node whether it answers, before the audit's drift checks (engine_reach.cpp).
  void check_reach();
  mutable std::mutex reach_mutex_;
  std::map<std::string, std::string> unreachable_;  // node name -> why
  std::mutex orphans_mutex_;
  std::set<std::string> reported_orphans_;  // each orphan is reported once per server run
  std::mutex addresses_mutex_;  // held while the nodes are asked: lists at once wait for one
  std::shared_ptr<const AddressMap> addresses_;
  util::Timer::TimePoint addresses_until_{};
  std::mutex audit_mutex_;
  std::condition_variable audit_wake_;
  bool audit_stop_ = false;
  std::thread auditor_;
  PortForwarder* forwarder_ = nullptr;
  std::mutex forwards_mutex_;
  std::map<std::string, std::vector<PortForward>> forwards_;  // by space: what is published
  std::map<std::string, std::uint64_t> forward_generation_;   // bumped by each withdrawal
  std::map<std::string, std::string> forward_errors_;         // by space
  // Spaces waiting for their guest's address: id -> (generation, deadline).
  std::map<std::string, std::pair<std::uint64_t, util::Timer::TimePoint>> awaiting_address_;
  std::condition_variable publisher_wake_;
  bool publisher_stop_ = false;
  std::thread publisher_;
  std::mutex adopted_mutex_;
  std::map<std::string, std::int64_t> adopted_;  // space id -> operation its next enqueue takes
  UsageMemo usage_memo_;                         // what each space counts for (count_usage)
  std::unique_ptr<StatsSampler> stats_;
  IdleWatch idle_{timer_};
  Executor executor_;  // last: its threads stop before the members they use
};

}  // namespace bowline::engine
