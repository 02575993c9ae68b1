// A node runs spaces' machines: this host's libvirt (LibvirtNode), another libvirt URI, or a
// KubeVirt cluster (KubevirtNode). The engine keeps every space's state, operations, events,
// addresses and pools whatever its node, and reaches a machine only through this seam: a node
// makes, powers, watches and removes what a space is on it, and says what it sees.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/node_capabilities.hpp"
#include "engine/readiness.hpp"
#include "plan/guest_plan.hpp"
#include "spec/spec.hpp"
#include "store/records.hpp"
#include "util/byte_stream.hpp"

namespace bowline::engine {

// What a node reports about a space's machine.
enum class MachineState {
  Running,
  Stopped,
  Starting,  // on its way up (scheduling, importing its disk, booting)
  Stopping,
  Failed,    // the node reports an error (detail says which)
  Gone,      // the machine does not exist there
  Suspended  // not running, its running state saved: the next start resumes it (suspend())
};
const char* to_string(MachineState state);
// The space state a machine state means (Failed and Gone: Error).
store::SpaceState space_state_of(MachineState state);

struct Observation {
  MachineState state = MachineState::Gone;
  // The node's own words: for Failed and Gone a sentence for the space's error ("the domain
  // x vanished from libvirt", "the VirtualMachine reports ErrImagePull").
  std::string detail;
};

// A machine that changed on its own (the guest powered off, QEMU crashed), from the node's
// event stream. Only nodes that have one send them.
struct MachineEvent {
  std::string machine;                // the space's domain name
  std::optional<MachineState> state;  // Running or Stopped; none: the event changes nothing
  bool crash = false;                 // stopped by a crash rather than a shutdown
  std::string description;            // e.g. "stopped (shutdown)"
};

// A space with what it is made from, as a node needs it.
struct NodeSpace {
  const store::Space& space;
  const store::Template& tmpl;
  const spec::Spec& spec;
  const plan::Owner& owner;
  // The other spaces on this node that hold its resources (CPUs, devices) now; asked while
  // the node places this one, so two starts never take the same.
  std::function<std::vector<store::Space>()> neighbours;
  // The files of spec.disks, in order: the owner's disk objects, resolved by the engine.
  std::vector<std::string> disk_files = {};
};

// How a node reports an operation's steps to the engine, which records them as progress.
struct Progress {
  std::function<void(const std::string& step, int percent)> step;
  // A download's share: the percent of the whole operation, the bytes done and in all.
  std::function<void(const std::string& step, int percent, std::uint64_t done, std::uint64_t total)>
      download;
  // The machine is made as the template says now: the engine records what was applied.
  std::function<void()> applied;
  // A restart's machine is down and about to come up again.
  std::function<void()> booting;

  // The same reports, with percentages scaled into [from, to] of this one's.
  Progress part(int from, int to) const;
};

// What apply left: the machine's state, and whether anything was made (libvirt makes a
// space's domain at its first start, not before).
struct Applied {
  Observation seen;
  bool made = true;
};

// What a running machine has used since it started, as its node counts it (the stats
// sampler makes rates of two). What the node does not report is nullopt.
struct MachineSample {
  std::string machine;                  // the space's domain name
  unsigned vcpus = 0;                   // 0: not reported
  std::optional<std::uint64_t> cpu_ns;  // CPU time, all vCPUs and the machine's own threads
  // Memory, in bytes: what the guest has now (the balloon's size), what it sees as usable in
  // all, of which free and page cache (from the guest's balloon driver), and the host's
  // resident set for the machine.
  std::optional<std::uint64_t> memory_bytes, memory_available, memory_unused, memory_caches,
      memory_rss;
  // Counters over all its disks and NICs (rx: what the guest received).
  std::optional<std::uint64_t> disk_read_bytes, disk_write_bytes, disk_reads, disk_writes;
  std::optional<std::uint64_t> net_rx_bytes, net_tx_bytes;
};

// Something this node holds that no space of this server knows: reported, never deleted.
struct Orphan {
  std::string key;         // unique on the node, so each is reported once
  nlohmann::json payload;  // {"domain", "space"} or {"directory"}
};

// A snapshot as the node took it (take_snapshot).
struct SnapshotTaken {
  bool running = false;            // the machine was running
  bool memory = false;             // it holds the running state (restore resumes it)
  bool best_effort = false;        // running, and the guest's filesystems could not be frozen
  std::int64_t size_bytes = 0;     // what the machine's disk files held when it was taken
  std::string best_effort_reason;  // why they could not be ("the guest agent did not answer")
  // Something the user should know although the snapshot is good (the guest's filesystems
  // could not be thawed afterwards).
  std::string warning;
};

class Node {
 public:
  virtual ~Node() = default;
  virtual const std::string& name() const = 0;
  virtual const char* kind() const = 0;  // "libvirt", "kubevirt"
  // What this node can do for a space, and why not what it cannot: asked before an operation
  // that needs it, never kind().
  virtual const NodeCapabilities& capabilities() const = 0;

  // --- admission: asked before anything is made, and again at each start
  // Why this node cannot run a space of `spec`, one reason per entry (empty: it can).
  virtual std::vector<std::string> refusals(const spec::Spec& spec) = 0;
  // Throws EngineError when `machine` is not free on this node (another tool's domain, a
  // leftover directory, a reserved name).
  virtual void check_machine_name(const std::string& machine) = 0;
  // Why a space of `spec` cannot have an address that bowline chooses (nullopt: it takes one
  // from the template's range).
  virtual std::optional<std::string> fixed_address_refusal(const spec::Spec& spec) const = 0;
  // Whether external ports of NAT spaces are published on this host's ports (the engine's
  // forwarder) rather than by the node itself.
  virtual bool publishes_host_ports() const = 0;

  // --- power; each throws when the node fails
  // Makes or updates the machine as the template says now; `run`: and runs it.
  virtual Applied apply(const NodeSpace& space, const Progress& progress, bool run) = 0;
  // Stops the machine (forced after the node's stop timeout); what it is afterwards.
  virtual Observation shut_down(const store::Space& space, const Progress& progress) = 0;
  // Applies the template again and reboots the machine (starts a stopped one).
  virtual Observation restart(const NodeSpace& space, const Progress& progress) = 0;
  // The machine must not come back by itself (a host reboot) while its space is stopped.
  virtual void stay_off(const store::Space& space) = 0;
  // Removes the machine and everything the node holds for it; once done, nothing is left.
  virtual void tear_down(const store::Space& space) = 0;
  // Makes a running unowned machine its new owner's in place (no reboot); throws when it
  // cannot.
  virtual void personalise(const NodeSpace& space, const std::string& previous_user) = 0;

  // --- state; nodes without it refuse with their capabilities' reason (an EngineError)
  // A snapshot `name` of the machine's disks: of a stopped machine its disks; of a running one
  // its disks with the guest's filesystems frozen while it is taken, and with `memory` its
  // running state. Nothing is left when it fails.
  virtual SnapshotTaken take_snapshot(const store::Space& space, const std::string& name,
                                      bool memory);
  // Puts the machine back as snapshot `name` has it (a running one is powered off first: the
  // restore discards what it holds); with `resume`, a snapshot holding the running state comes
  // back running. What the machine is afterwards.
  virtual Observation restore_snapshot(const store::Space& space, const std::string& name,
                                       bool resume);
  // Removes snapshot `name` (nothing when there is none).
  virtual void delete_snapshot(const store::Space& space, const std::string& name);
  // Removes every snapshot whose name starts with `prefix` (bowline's own short-lived ones);
  // nodes without snapshots have none.
  virtual void delete_snapshots_named(const store::Space& space, std::string_view prefix) {
    (void)space;
    (void)prefix;
  }
  // Returns once the node runs no long job on the machine any more (a snapshot, a revert or a
  // save that a stopped server asked for and the node finishes without it), or after minutes.
  virtual void wait_for_jobs(const store::Space& space) { (void)space; }
  // The names of the machine's snapshots as the node has them, once any job that may change
  // them (a snapshot a stopped server asked for) has ended; nullopt when the node keeps none
  // or the machine is not there.
  virtual std::optional<std::vector<std::string>> snapshot_names(const store::Space& space) {
    (void)space;
    return std::nullopt;
  }
  // A new disk file `target` holding the machine's boot disk as snapshot `name` has it: an
  // overlay on the same base image, or with `full` a standalone copy. A failure leaves no file.
  virtual void copy_disk_at(const store::Space& space, const std::string& name,
                            const std::filesystem::path& target, bool full);

  // --- moves (Capability::Move): a stopped space's files leave one node for another
  // Copies the space's movable files into `dir` on the server: its boot disk as disk.qcow2
  // (its backing file named as this node has it) and its NVRAM as nvram.fd when it has one.
  virtual void export_files(const store::Space& space, const std::filesystem::path& dir);
  // Takes them in for `space`: the disk pointed at this node's copy of the template's image,
  // then placed with the NVRAM where the space's files go here. Nothing is left when it fails.
  virtual void import_files(const NodeSpace& space, const std::filesystem::path& dir,
                            const Progress& progress);

  // Saves the running machine's state and frees what it holds on the node (memory, CPU); the
  // next resume() continues it where it was. What the machine is afterwards (Suspended).
  virtual Observation suspend(const store::Space& space, const Progress& progress);
  // Continues a suspended machine (as it was: a template change waits for the next stop and
  // start). What the machine is afterwards (Running).
  virtual Observation resume(const store::Space& space, const Progress& progress);

  // --- watching
  // Lifecycle events of this node's machines; until unwatch(). Nodes without events ignore it.
  virtual void watch(std::function<void(const MachineEvent&)> on_event) { (void)on_event; }
  virtual void unwatch() {}
  // Throws when the node cannot be asked.
  virtual Observation observe(const store::Space& space) = 0;
  // Machines and files that look like bowline's but are none of `known` (domain names).
  virtual std::vector<Orphan> orphans(const std::set<std::string>& known) = 0;
  // The running machine's IPv4 address as the node sees it (a DHCP lease), if known.
  virtual std::optional<std::string> address(const store::Space& space) = 0;
  // The IPv4 addresses of these running machines by space id, for the list of spaces: one
  // pass over the node (its DHCP leases), never a question per machine. Those it cannot tell
  // are left out; nodes without such a pass tell none.
  virtual std::map<std::string, std::string> addresses(const std::vector<store::Space>& spaces) {
    (void)spaces;
    return {};
  }
  // cloud-init's progress from the machine's console log; nullopt when the node has none.
  virtual std::optional<Readiness> readiness(const store::Space& space) = 0;
  // What the machine is made of, by part, for pending changes (plan/change_parts); nullopt
  // when the node does not tell parts apart.
  virtual std::optional<std::map<std::string, std::string>> parts(const NodeSpace& space) = 0;

  // What every running machine of this node uses, in one call to the node (never one per
  // machine), for the stats sampler; other machines than spaces' may be among them. Empty
  // when the node reports none (KubeVirt, for now). Throws when the node cannot be asked.
  virtual std::vector<MachineSample> machine_samples() { return {}; }
  // The memory its host has free for new machines (its free memory less the node's reserve),
  // for placement; nullopt when the node does not say. Throws when it cannot be asked.
  virtual std::optional<std::int64_t> free_memory() { return std::nullopt; }

  // --- access (SpaceAccess); each throws when it cannot be opened
  virtual std::unique_ptr<util::ByteStream> open_console(const store::Space& space) = 0;
  virtual int open_display(const store::Space& space) = 0;
  // A connected TCP socket to the guest's `port`, within `timeout`.
  virtual int open_port(const store::Space& space, std::uint16_t port,
                        std::chrono::milliseconds timeout) = 0;

  // Why the node cannot be reached now (its libvirt does not answer); nullopt when it answers.
  virtual std::optional<std::string> unreachable() { return std::nullopt; }

  // This node's record for GET /api/v1/nodes: {name, kind, runtimes, ready, checks, ...}.
  virtual nlohmann::json report() = 0;
};

}  // namespace bowline::engine
