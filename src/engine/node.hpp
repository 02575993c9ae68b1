// A node runs spaces' machines: this host's libvirt (LibvirtNode), another libvirt URI, or a
// KubeVirt cluster (KubevirtNode). The engine keeps every space's state, operations, events,
// addresses and pools whatever its node, and reaches a machine only through this seam: a node
// makes, powers, watches and removes what a space is on it, and says what it sees.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

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
  Failed,  // the node reports an error (detail says which)
  Gone     // the machine does not exist there
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

// Something this node holds that no space of this server knows: reported, never deleted.
struct Orphan {
  std::string key;         // unique on the node, so each is reported once
  nlohmann::json payload;  // {"domain", "space"} or {"directory"}
};

class Node {
 public:
  virtual ~Node() = default;
  virtual const std::string& name() const = 0;
  virtual const char* kind() const = 0;  // "libvirt", "kubevirt"

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
  // cloud-init's progress from the machine's console log; nullopt when the node has none.
  virtual std::optional<Readiness> readiness(const store::Space& space) = 0;
  // What the machine is made of, by part, for pending changes (plan/change_parts); nullopt
  // when the node does not tell parts apart.
  virtual std::optional<std::map<std::string, std::string>> parts(const NodeSpace& space) = 0;

  // --- access (SpaceAccess); each throws when it cannot be opened
  virtual std::unique_ptr<util::ByteStream> open_console(const store::Space& space) = 0;
  virtual int open_display(const store::Space& space) = 0;
  // A connected TCP socket to the guest's `port`, within `timeout`.
  virtual int open_port(const store::Space& space, std::uint16_t port,
                        std::chrono::milliseconds timeout) = 0;

  // This node's record for GET /api/v1/nodes: {name, kind, runtimes, ready, checks, ...}.
  virtual nlohmann::json report() = 0;
};

}  // namespace bowline::engine
