// A space's address on a libvirt node (engine/guest_address.hpp says which and why): a bridged
// space's is bowline's own choice; a NAT space's is the DHCP lease its first NIC's MAC holds in
// the network that NIC is on, as the running domain says. Never the guest agent's word.
//
// The list asks for many running machines at once: the DHCP leases of every active libvirt
// network in one pass, matched by the MAC each space's first NIC has (plan::mac_for, derived
// from the space's id) in the network that NIC is on (kept per domain, so no domain XML is read
// per list). A driver that lists no leases (libvirt's test driver) is asked per domain, from
// the same leases space info reads: the list never shows less than a space's page.
#include <ctime>
#include <pugixml.hpp>

#include "engine/guest_address.hpp"
#include "engine/libvirt_node.hpp"
#include "spec/ipv4.hpp"
#include "util/strings.hpp"

namespace bowline::engine {

namespace {

// The first NIC of a running domain, as libvirt runs it.
struct RunningNic {
  std::string type;     // "network", "bridge"
  std::string mac;      // lower case
  std::string network;  // type network: the libvirt network's name
  std::string tap;      // the host-side device
};

std::optional<RunningNic> first_nic(const std::string& xml) {
  pugi::xml_document doc;
  if (!doc.load_string(xml.c_str())) return std::nullopt;
  const auto nic = doc.child("domain").child("devices").child("interface");
  if (!nic) return std::nullopt;
  return RunningNic{nic.attribute("type").value(),
                    util::to_lower(nic.child("mac").attribute("address").value()),
                    nic.child("source").attribute("network").value(),
                    nic.child("target").attribute("dev").value()};
}

std::int64_t now_unix() {
  return static_cast<std::int64_t>(std::time(nullptr));
}

}  // namespace

AddressBarriers LibvirtNode::barriers(const std::string& network) {
  AddressBarriers b;
  b.host = s_.host_addresses ? s_.host_addresses() : host_ipv4_addresses();
  if (!network.empty())
    if (const auto info = hypervisor_.lookup_network(network))
      for (const auto& server : info->dhcp_servers)
        if (const auto a = spec::Ipv4Address::parse(server)) b.gateways.insert(a->value);
  return b;
}

std::optional<std::vector<libvirt::DhcpLease>> LibvirtNode::all_leases() {
  try {
    return hypervisor_.dhcp_leases();
  } catch (const libvirt::HypervisorError& e) {
    if (!e.is_unsupported()) throw;
    return std::nullopt;
  }
}

// Where the driver keeps no list of leases, libvirt still reports the domain's NIC addresses
// from its leases (never the guest agent's word): one call for this domain.
std::optional<std::string> LibvirtNode::lease_address(
    const std::string& domain, const std::optional<std::vector<libvirt::DhcpLease>>& leases,
    const std::string& network, const std::string& mac) {
  if (leases) {
    if (const auto lease = lease_of(*leases, network, mac, now_unix())) return lease->address;
    return std::nullopt;
  }
  for (const auto& a : hypervisor_.interface_addresses(domain, libvirt::AddressSource::Lease))
    if (!a.ipv6 && util::to_lower(a.mac) == mac && spec::Ipv4Address::parse(a.address))
      return a.address;
  return std::nullopt;
}

// The address of a NAT NIC: its own lease.
LibvirtNode::FoundAddress LibvirtNode::leased_address(const store::Space& space,
                                                      const std::string& network,
                                                      const std::string& mac) {
  const auto address = lease_address(space.domain_name, all_leases(), network, mac);
  if (!address)
    return {std::nullopt,
            "the space has no address yet (its guest holds no DHCP lease in the "
            "network " +
                network + "): try again once it has booted"};
  return {address, ""};
}

LibvirtNode::FoundAddress LibvirtNode::find_address(const store::Space& space) {
  std::optional<RunningNic> nic;
  if (!space.ip) {
    nic = first_nic(hypervisor_.domain_xml(space.domain_name, false));
    if (!nic || nic->type != "network")
      return {std::nullopt, "the space has no address: its first NIC is on no libvirt network"};
    if (nic->mac != plan::mac_for(space.id, 0))
      return {std::nullopt, "the space's NIC has the MAC " + nic->mac +
                                ", not the one bowline gave it: its domain was changed behind "
                                "bowline's back"};
    remember_network(space.domain_name, nic->network);
  }
  auto found =
      space.ip ? FoundAddress{space.ip, ""} : leased_address(space, nic->network, nic->mac);
  if (!found.address) return found;
  if (const auto why = guest_address_refusal(*found.address, barriers(nic ? nic->network : "")))
    return {std::nullopt, "refused: " + *why};
  // Where bowline's guard filters the NIC, the address is also the one the guest may send from.
  if (nic && s_.guard && s_.guard->guards(nic->tap)) {
    const auto allowed = s_.guard->addresses(nic->tap);
    const auto a = spec::Ipv4Address::parse(*found.address);
    if (std::find(allowed.begin(), allowed.end(), *a) == allowed.end())
      return {std::nullopt, "the space's lease " + *found.address +
                                " is not yet the one its guest guard allows: try again in a few "
                                "seconds"};
  }
  return found;
}

std::optional<std::string> LibvirtNode::address(const store::Space& space) {
  try {
    return find_address(space).address;
  } catch (const libvirt::HypervisorError&) {
    return std::nullopt;  // not running (any more), or libvirt is away
  }
}

// The same leases and refusals as space info's address (find_address), asked once for all
// the spaces where the driver lists leases.
std::map<std::string, std::string> LibvirtNode::addresses(const std::vector<store::Space>& spaces) {
  std::map<std::string, std::string> out;
  if (spaces.empty()) return out;
  const auto leases = all_leases();
  std::map<std::string, AddressBarriers> kept;  // by network: its gateways asked once
  for (const auto& space : spaces) {
    const auto network = nic_network(space.domain_name);
    if (!network) continue;
    std::optional<std::string> address;
    try {
      address = lease_address(space.domain_name, leases, *network, plan::mac_for(space.id, 0));
    } catch (const libvirt::HypervisorError&) {
      continue;  // not running any more: no address to list
    }
    if (!address) continue;
    auto at = kept.find(*network);
    if (at == kept.end()) at = kept.emplace(*network, barriers(*network)).first;
    if (!guest_address_refusal(*address, at->second)) out[space.id] = *address;
  }
  return out;
}

// Kept from the domain's definition (define) or its XML, read once: a list of hundreds of
// spaces asks libvirt nothing per space.
std::optional<std::string> LibvirtNode::nic_network(const std::string& domain) {
  {
    std::lock_guard lock(networks_mutex_);
    if (const auto it = nic_networks_.find(domain); it != nic_networks_.end()) return it->second;
  }
  try {
    const auto nic = first_nic(hypervisor_.domain_xml(domain, false));
    if (!nic || nic->type != "network") return std::nullopt;
    remember_network(domain, nic->network);
    return nic->network;
  } catch (const libvirt::HypervisorError&) {
    return std::nullopt;
  }
}

void LibvirtNode::remember_network(const std::string& domain, const std::string& network) {
  std::lock_guard lock(networks_mutex_);
  if (network.empty())
    nic_networks_.erase(domain);
  else
    nic_networks_[domain] = network;
}

}  // namespace bowline::engine
