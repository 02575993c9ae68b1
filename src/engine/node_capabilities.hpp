// What a kind of node can do for a space, and for what it cannot, why in words for users: one
// table per kind (Node::capabilities()). The engine asks it before an operation that needs
// the capability (never the kind's name), GET /api/v1/nodes serves it, and docs/backends.md
// holds the same table as markdown (backends_markdown, checked by a unit test).
#pragma once

#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace bowline::engine {

enum class Capability {
  Console,          // the serial console (space console, the web UI's console)
  Vnc,              // the graphical display (space vnc, the web UI's display)
  Terminal,         // the web terminal: SSH to the guest through the server
  Tunnel,           // space tunnel / port forwards to a guest's port through the server
  ExternalPorts,    // externalPorts of NAT spaces published outside
  Readiness,        // cloud-init's progress for --wait and space info
  Stats,            // CPU, memory, disk and network figures (space stats)
  Snapshots,        // disk snapshots: take, restore, delete
  MemorySnapshots,  // snapshots holding the running state (snapshot --memory)
  Clone,            // space clone
  Suspend,          // space suspend / resume, suspend when idle
  Export,           // space export to an archive
  Import,           // space import from an archive
  Disks,            // disk objects (disk create, --from-space) and a template's disks:
  Move,             // space move: a stopped space's disk to another node, or from one
};

inline constexpr std::array kCapabilities{
    Capability::Console,         Capability::Vnc,       Capability::Terminal, Capability::Tunnel,
    Capability::ExternalPorts,   Capability::Readiness, Capability::Stats,    Capability::Snapshots,
    Capability::MemorySnapshots, Capability::Clone,     Capability::Suspend,  Capability::Export,
    Capability::Import,          Capability::Disks,     Capability::Move};

const char* to_string(Capability capability);  // "console", "memory_snapshots", ...
// What it is in words, as an error and the docs name it ("snapshots", "the serial console").
const char* describe(Capability capability);

class NodeCapabilities {
 public:
  // Every capability; lacks() takes them away one by one.
  explicit NodeCapabilities(std::string kind) : kind_(std::move(kind)) {}
  NodeCapabilities& lacks(Capability capability, std::string reason);

  const std::string& kind() const { return kind_; }
  bool supports(Capability capability) const { return !missing_.count(capability); }
  // Why not, for users; empty when supported.
  std::string reason(Capability capability) const;
  // Throws EngineError (Invalid) saying what the node `node` lacks and why.
  void require(Capability capability, const std::string& node) const;
  // [{name, supported, reason}] in kCapabilities' order (reason null when supported).
  nlohmann::json to_json() const;

 private:
  std::string kind_;
  std::map<Capability, std::string> missing_;
};

// docs/backends.md's table: a row per capability, a column per node kind.
std::string backends_markdown();

}  // namespace bowline::engine
