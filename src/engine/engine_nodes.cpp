// The engine's nodes: which node a space is on, the spaces that share it, the events its
// machines send, and the console and display (SpaceAccess) through it.
#include <algorithm>

#include "engine/engine.hpp"
#include "engine/event_kinds.hpp"
#include "engine/sshd_probe.hpp"
#include "ssh/shell.hpp"
#include "util/upstream_error.hpp"

namespace bowline::engine {

using store::SpaceState;

void Engine::add_node(Node& node) {
  if (find_node(node.name())) throw std::invalid_argument("two nodes are named " + node.name());
  nodes_.push_back(&node);
}

Node* Engine::find_node(const std::string& name) {
  if (name.empty()) return nodes_.empty() ? nullptr : nodes_.front();
  for (auto* node : nodes_)
    if (node->name() == name) return node;
  return nullptr;
}

Node& Engine::node_named(const std::string& name) {
  if (auto* node = find_node(name)) return *node;
  std::string known;
  for (auto* node : nodes_) known += (known.empty() ? "" : ", ") + node->name();
  throw EngineError(EngineError::Kind::Invalid,
                    "no node named " + name + " (nodes: " + known + ")");
}

Node& Engine::node_of(const store::Space& space) {
  if (auto* node = find_node(space.node)) return *node;
  throw EngineError(EngineError::Kind::Invalid,
                    "the space's node " + space.node + " is not configured on this server");
}

bool Engine::on_node(const store::Space& space, const Node& node) const {
  return space.node.empty() ? &node == nodes_.front() : space.node == node.name();
}

std::vector<store::Space> Engine::neighbours(const store::Space& space) {
  std::vector<store::Space> out;
  auto* node = find_node(space.node);
  if (!node) return out;
  for (auto& other : store_.spaces().list())
    if (other.id != space.id && on_node(other, *node) && store::holds_node_resources(other.state))
      out.push_back(std::move(other));
  return out;
}

void Engine::on_machine_event(Node& node, const MachineEvent& event) {
  if (!event.state) return;
  std::optional<store::Space> space;
  try {
    space = store_.spaces().find_by_domain_name(event.machine);
  } catch (...) {
    return;
  }
  if (!space || !on_node(*space, node)) return;
  events_.publish(event::kDomainLifecycle, space->id, {{"event", event.description}});
  // Background: never block the node's event thread.
  executor_.submit(space->id, [this, id = space->id, state = *event.state, crash = event.crash] {
    after_machine_event(id, state, crash);
  });
}

// Events queue behind the operation that caused them: by the time this runs, a restart's own
// shutdown is history. Act only when the node still says what the event said.
void Engine::after_machine_event(const std::string& id, MachineState state, bool crash) {
  auto current = store_.spaces().get(id);
  if (!current || store::operation_owns(current->state)) return;
  auto* node = find_node(current->node);
  if (!node) return;
  try {
    const auto now = node->observe(*current).state;
    if (state == MachineState::Stopped && now == MachineState::Suspended) {
      // A save no operation follows to its end (libvirt finishes one that a killed server
      // started): the machine is saved, not stopped, and nothing is to restart it.
      if (current->state == SpaceState::Running) {
        set_state(id, SpaceState::Suspended);
        withdraw_ports(id);
      }
      return;
    }
    const bool still = state == MachineState::Running
                           ? now == MachineState::Running
                           : now == MachineState::Stopped || now == MachineState::Gone;
    if (!still) return;
  } catch (const std::exception&) {
    return;
  }
  if (state == MachineState::Running && current->state != SpaceState::Running) {
    set_state(id, SpaceState::Running);
    publish_ports(id);
    return;
  }
  if (state != MachineState::Stopped || current->state != SpaceState::Running) return;
  set_state(id, SpaceState::Stopped);
  withdraw_ports(id);
  // Stopped without a user's stop: Always restarts, RerunOnFailure only after a crash.
  if (current->desired_state != store::DesiredState::Running) return;
  try {
    const auto spec = space_spec(*current);
    const bool again = spec.run_strategy == spec::RunStrategy::Always ||
                       (spec.run_strategy == spec::RunStrategy::RerunOnFailure && crash);
    if (again) {
      events_.publish(event::kSpaceRestart, id,
                      {{"reason", crash ? "crashed" : "stopped inside the guest"}});
      start_space(id);
    } else {
      store_.spaces().set_desired_state(id, store::DesiredState::Stopped);
      node->stay_off(*current);
    }
  } catch (const std::exception& e) {
    set_state(id, SpaceState::Error, std::string("cannot restart: ") + e.what());
  }
}

std::unique_ptr<util::ByteStream> Engine::open_console(const std::string& space_id) {
  const auto space = store_.spaces().get(space_id);
  if (!space) return nullptr;
  return node_of(*space).open_console(*space);
}

int Engine::open_display(const std::string& space_id) {
  const auto space = require(space_id);
  return node_of(space).open_display(space);
}

int Engine::open_port(const std::string& space_id, std::uint16_t port) {
  const auto space = require(space_id);
  return node_of(space).open_port(space, port, std::chrono::seconds(5));
}

std::string Engine::ssh_port_state(const std::string& space_id) {
  const auto space = require(space_id);
  if (space.state != SpaceState::Running) return "not running";
  try {
    auto& node = node_of(space);
    return sshd_state([&] { return node.open_port(space, 22, std::chrono::milliseconds(500)); });
  } catch (const EngineError& e) {
    return e.kind() == EngineError::Kind::Conflict ? "no address" : "unavailable";
  } catch (const std::exception&) {
    return "unavailable";  // the node could not open a connection (a KubeVirt port forward)
  }
}

std::unique_ptr<util::TerminalStream> Engine::open_terminal(const std::string& space_id,
                                                            unsigned cols, unsigned rows) {
  const auto space = require(space_id);
  if (space.host_key_public.empty())
    throw EngineError(EngineError::Kind::Conflict,
                      "the space was made by a bowline that kept no SSH host key for it, so its "
                      "guest cannot be told from an impostor: recreate the space");
  if (space.terminal_key.empty())
    throw EngineError(EngineError::Kind::Conflict,
                      "the space gets its terminal key at its next start: restart it");
  const auto owner = space.owner_id ? store_.users().get(*space.owner_id) : std::nullopt;
  if (!owner) throw EngineError(EngineError::Kind::Conflict, "the space has no owner yet");
  ssh::ShellOptions options;
  options.user = owner->username;
  options.private_key = space.terminal_key;
  options.host_key_public = space.host_key_public;
  options.cols = std::clamp(cols, 2u, 1000u);
  options.rows = std::clamp(rows, 1u, 1000u);
  const int fd = node_of(space).open_port(space, 22, std::chrono::seconds(5));
  try {
    return ssh::open_shell(fd, options);
  } catch (const ssh::ShellError& e) {
    throw util::UpstreamError("ssh", e.what());
  }
}

}  // namespace bowline::engine
