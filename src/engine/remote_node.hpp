// A node that is not this host's libvirt (today: a KubeVirt cluster). The engine keeps a
// space's state, operations and events whatever its node; a remote node only makes, powers
// and deletes what the space is over there, and says what it sees.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "spec/spec.hpp"
#include "store/records.hpp"

namespace bowline::engine {

// What a remote node reports about a space's machine.
enum class RemoteState {
  Running,
  Stopped,
  Starting,  // on its way up (scheduling, importing its disk, booting)
  Stopping,
  Failed,  // the node reports an error (detail says which)
  Gone     // the machine does not exist there
};
const char* to_string(RemoteState state);

struct Observation {
  RemoteState state = RemoteState::Gone;
  std::string detail;  // the node's own word for it, e.g. KubeVirt's printableStatus
};

// A space with what it is made from, as a remote node needs it.
struct RemoteSpace {
  const store::Space& space;
  const spec::Spec& spec;
  const store::User* owner;  // nullptr: none
};

class RemoteNode {
 public:
  virtual ~RemoteNode() = default;
  virtual const std::string& name() const = 0;
  virtual const char* kind() const = 0;  // "kubevirt"
  // Why this node cannot run a space of `spec`, one reason per entry (empty: it can).
  virtual std::vector<std::string> refusals(const spec::Spec& spec) const = 0;
  // Makes or updates every object of the space; `running`: whether it should run. Throws.
  virtual void apply(const RemoteSpace& space, bool running) = 0;
  // Keeps the objects as they are and makes the machine stop. Throws.
  virtual void power_off(const store::Space& space) = 0;
  // Re-applies and restarts a running machine (starts a stopped one). Throws.
  virtual void restart(const RemoteSpace& space) = 0;
  // Deletes the space's objects; returns once the node accepted every delete. Throws.
  virtual void remove(const store::Space& space) = 0;
  // Throws when the node cannot be asked.
  virtual Observation observe(const store::Space& space) = 0;
  // This node's record for GET /api/v1/nodes: {name, kind, runtimes, ready, checks, ...}.
  virtual nlohmann::json report() = 0;
};

}  // namespace bowline::engine
