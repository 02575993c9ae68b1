// External access to NAT spaces on nodes that publish on this host's ports (port_forwards.hpp):
// host ports held for a space's life, forwarded while it runs. A NAT guest's address comes from its
// DHCP lease after it boots, so publishing waits for it on a thread of its own (never holding an
// operation's worker), and a stop or delete withdraws the ports; a generation number per space
// keeps a late publication from undoing a withdrawal.
#include "engine/engine.hpp"
#include "engine/event_kinds.hpp"

namespace bowline::engine {

using store::SpaceState;

bool Engine::publishes_ports(const store::Space& space, const spec::Spec& spec) {
  const auto* node = find_node(space.node);
  return node && node->publishes_host_ports() && spec.external &&
         spec.external_method == spec::ExternalMethod::PortList &&
         spec.network.mode == spec::NetworkMode::Nat && !spec.external_ports.empty();
}

void Engine::allocate_ports(const store::Space& space, const spec::Spec& spec) {
  // What the template no longer publishes goes; what it publishes now is held (or kept).
  for (const auto& held : store_.host_ports().of_space(space.id))
    if (!publishes_ports(space, spec) ||
        std::find(spec.external_ports.begin(), spec.external_ports.end(), held.guest_port) ==
            spec.external_ports.end()) {
      store_.host_ports().release_one(space.id, held.protocol, held.guest_port);
    }
  if (!publishes_ports(space, spec)) return;
  if (!forwarder_)
    throw EngineError(EngineError::Kind::Invalid,
                      "this server publishes no external ports (external: true with PortList "
                      "on a NAT space): its operator has set no server.external_address, an "
                      "address of the host the web UI is not reached by");
  for (const auto port : spec.external_ports)
    if (!store_.host_ports().allocate(space.id, "tcp", port, settings_.external_port_first,
                                      settings_.external_port_last))
      throw EngineError(
          EngineError::Kind::Conflict,
          "no free host port left in " + std::to_string(settings_.external_port_first) + "-" +
              std::to_string(settings_.external_port_last) +
              " (server.external_ports) for the space's external port " + std::to_string(port));
}

void Engine::publish_ports(const std::string& id) {
  if (!forwarder_ || store_.host_ports().of_space(id).empty()) return;
  {
    std::lock_guard lock(forwards_mutex_);
    awaiting_address_[id] = {forward_generation_[id], timer_.now() + settings_.address_timeout};
    if (!publisher_.joinable()) publisher_ = std::thread([this] { publisher_loop(); });
  }
  publisher_wake_.notify_all();
}

void Engine::publisher_loop() {
  std::unique_lock lock(forwards_mutex_);
  auto next_check = timer_.now();
  while (!publisher_stop_) {
    const auto now = timer_.now();
    auto waiting = awaiting_address_;
    lock.unlock();
    if (now >= next_check) {
      keep_forwards();
      next_check = now + std::chrono::seconds(3);
    }
    for (const auto& [id, entry] : waiting) {
      const bool last_try = now >= entry.second;
      if (try_publish(id, entry.first, last_try) || last_try) {
        std::lock_guard relock(forwards_mutex_);
        if (auto it = awaiting_address_.find(id);
            it != awaiting_address_.end() && it->second == entry)
          awaiting_address_.erase(it);
      }
    }
    lock.lock();
    if (!publisher_stop_)
      timer_.wait_until(lock, publisher_wake_, timer_.now() + std::chrono::seconds(1));
  }
}

// True when done (published, or nothing to publish any more).
bool Engine::try_publish(const std::string& id, std::uint64_t generation, bool last_try) {
  const auto space = store_.spaces().get(id);
  if (!space || space->state != SpaceState::Running) return true;
  auto* node = find_node(space->node);
  const auto address = node ? node->address(*space) : std::nullopt;
  if (!address) {
    if (last_try) {
      std::lock_guard lock(forwards_mutex_);
      forward_errors_[id] = "the guest got no address within " +
                            std::to_string(settings_.address_timeout.count()) +
                            " s: its external ports are not forwarded";
      events_.publish(event::kSpaceExternal, id, {{"error", forward_errors_[id]}});
    }
    return false;
  }
  std::vector<PortForward> forwards;
  for (const auto& port : store_.host_ports().of_space(id))
    forwards.push_back({id, port.protocol, port.host_port, *address, port.guest_port});
  std::lock_guard lock(forwards_mutex_);
  if (forward_generation_[id] != generation) return true;  // withdrawn meanwhile
  forwards_[id] = forwards;
  apply_forwards_locked();
  nlohmann::json ports = nlohmann::json::array();
  for (const auto& f : forwards)
    ports.push_back(
        {{"protocol", f.protocol}, {"hostPort", f.host_port}, {"guestPort", f.guest_port}});
  if (const auto it = forward_errors_.find(id); it != forward_errors_.end())
    events_.publish(event::kSpaceExternal, id, {{"error", it->second}});
  else
    events_.publish(event::kSpaceExternal, id, {{"address", *address}, {"ports", ports}});
  return true;
}

// The forwards stay while their spaces run: a firewall reload or `nft flush ruleset` that took
// them away is undone within seconds, and said.
void Engine::keep_forwards() {
  {
    std::lock_guard lock(forwards_mutex_);
    if (forwards_.empty()) return;
  }
  if (forwarder_->in_place()) return;  // asks nft: not under the lock that describe() takes
  std::lock_guard lock(forwards_mutex_);
  if (forwards_.empty()) return;
  apply_forwards_locked();
  events_.publish(event::kFirewallRestored, std::nullopt,
                  {{"table", "ip bowline"},
                   {"reason",
                    "the external ports' table or its FORWARD jump had gone: written "
                    "again"}});
}

void Engine::withdraw_ports(const std::string& id) {
  std::lock_guard lock(forwards_mutex_);
  ++forward_generation_[id];
  awaiting_address_.erase(id);
  forward_errors_.erase(id);
  if (forwards_.erase(id)) apply_forwards_locked();
}

void Engine::apply_forwards_locked() {
  std::vector<PortForward> all;
  for (const auto& [id, list] : forwards_) all.insert(all.end(), list.begin(), list.end());
  try {
    forwarder_->apply(all);
    for (const auto& [id, list] : forwards_) forward_errors_.erase(id);
  } catch (const std::exception& e) {
    // Reaches the user on space info and as an event, not only a log line.
    for (const auto& [id, list] : forwards_) forward_errors_[id] = e.what();
    events_.publish(event::kReconcileError, std::nullopt, {{"error", e.what()}});
  }
}

}  // namespace bowline::engine
