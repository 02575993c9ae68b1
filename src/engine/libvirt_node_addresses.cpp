// The addresses of many running machines at once, for the list of spaces: the DHCP leases of
// every active libvirt network in one pass, matched by the MAC each space's first NIC has
// (plan::mac_for, derived from the space's id, so no domain XML is read).
#include <cctype>

#include "engine/libvirt_node.hpp"
#include "spec/ipv4.hpp"

namespace bowline::engine {

namespace {

std::string lower(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

std::map<std::string, std::string> LibvirtNode::addresses(const std::vector<store::Space>& spaces) {
  std::map<std::string, std::string> out;
  if (spaces.empty()) return out;
  // A guest that renewed with another address has two leases: the one that lasts longest is
  // the one it holds.
  std::map<std::string, const libvirt::DhcpLease*> by_mac;
  const auto leases = hypervisor_.dhcp_leases();
  for (const auto& lease : leases) {
    if (lease.ipv6 || !spec::Ipv4Address::parse(lease.address)) continue;
    auto& best = by_mac[lower(lease.mac)];
    if (!best || lease.expiry > best->expiry) best = &lease;
  }
  for (const auto& space : spaces)
    if (const auto it = by_mac.find(plan::mac_for(space.id, 0)); it != by_mac.end())
      out[space.id] = it->second->address;
  return out;
}

}  // namespace bowline::engine
