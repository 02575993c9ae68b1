// The list of spaces shows every running space's address. Bridged spaces have theirs in the
// store (bowline chose it); a NAT space's comes from its network's DHCP server, which only the
// node knows: asked once per node for all of its spaces, never once per space (a guest agent
// call per row would make a list of hundreds take seconds).
#include "engine/engine.hpp"

namespace bowline::engine {

namespace {

// Long enough that the lists of many open pages share one pass; short enough that a guest's
// new lease shows at the next list.
constexpr std::chrono::seconds kAddressesKept{1};

}  // namespace

std::shared_ptr<const Engine::AddressMap> Engine::learned_addresses() {
  std::lock_guard lock(addresses_mutex_);
  const auto now = timer_.now();
  if (addresses_ && now < addresses_until_) return addresses_;
  // The reader's connection: a list never waits for the engine's writes.
  std::map<std::string, std::vector<store::Space>> by_node;
  for (auto& space : store_.read_spaces().list_running_without_ip())
    by_node[space.node].push_back(std::move(space));
  AddressMap fresh;
  for (const auto& [name, spaces] : by_node) {
    auto* node = find_node(name);
    if (!node) continue;
    try {
      fresh.merge(node->addresses(spaces));
    } catch (const std::exception&) {
      // A node that cannot be asked now lists its spaces without addresses; space info says
      // why (it asks the node itself).
    }
  }
  if (!addresses_ || *addresses_ != fresh)
    addresses_ = std::make_shared<const AddressMap>(std::move(fresh));
  addresses_until_ = now + kAddressesKept;
  return addresses_;
}

}  // namespace bowline::engine
