// Whether a NAT space's libvirt network gives a guest one DHCP lease, whatever it sends. dnsmasq
// keys leases by the client id a DHCP client sends (option 61) unless it is told
// dhcp-ignore-clid: a guest that asks again and again with new client ids (its own hardware
// address each time: the guest guard drops every request for another) takes an address each
// time, and can empty the network's pool for its neighbours. bowline leaves the operator's
// networks as they are and says so in node check; its own test and quickstart networks carry
// the option.
#pragma once

#include <string>

#include "engine/node_check.hpp"
#include "libvirt/hypervisor.hpp"

namespace bowline::engine {

// The `dhcp:<network>` check (a warning, not required): the network's dnsmasq has
// dhcp-ignore-clid, or the fix says how to give it.
Check check_one_lease_per_mac(const std::string& network, libvirt::Hypervisor* hypervisor);

}  // namespace bowline::engine
