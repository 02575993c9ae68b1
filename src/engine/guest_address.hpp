// Which address of a guest bowline connects to: tunnels, the terminal, the sshPort check,
// external ports (DNAT) and the list all go to an address bowline decided, never to one the
// guest reports. A bridged space's is the one bowline chose (engine/ipam); a NAT space's is the
// DHCP lease its own MAC holds in its own network, as libvirt's dnsmasq records it. The guest
// agent is never asked: a guest that puts the gateway's address (or any of the host's) on an
// interface would otherwise send bowline's connections to the host itself.
//
// Whatever the source, some addresses are never a guest's: this host's own, the network's
// gateway (the host's side of the network), and those no unicast host has (0/8, loopback,
// link-local, multicast, reserved, broadcast).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "libvirt/hypervisor.hpp"
#include "spec/ipv4.hpp"

namespace bowline::engine {

// The IPv4 addresses this host's interfaces have now (getifaddrs; loopback included).
std::set<std::uint32_t> host_ipv4_addresses();

// What a guest's address must not be.
struct AddressBarriers {
  std::set<std::uint32_t> host;      // this host's own addresses
  std::set<std::uint32_t> gateways;  // the guest network's gateway (its DHCP server's address)
};

// Why bowline never connects to `address` as a guest's, in words for the user ("198.51.100.1
// is the network's gateway"); nullopt when it may.
std::optional<std::string> guest_address_refusal(const spec::Ipv4Address& address,
                                                 const AddressBarriers& barriers);
std::optional<std::string> guest_address_refusal(const std::string& address,
                                                 const AddressBarriers& barriers);

// The lease that gives a NIC its address: IPv4, in `network`, for `mac` (any case), not run out
// at `now` (seconds since the epoch; expiry 0 never runs out), the one that lasts longest when
// the guest holds several (renewed with another client id). nullopt: none.
std::optional<libvirt::DhcpLease> lease_of(const std::vector<libvirt::DhcpLease>& leases,
                                           const std::string& network, const std::string& mac,
                                           std::int64_t now);

}  // namespace bowline::engine
