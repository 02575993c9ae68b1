// The network's checks: IPv4 forwarding (external ports), the bridges and the libvirt networks
// that templates name.
#include <fstream>

#include "engine/node_check_kinds.hpp"

namespace bowline::engine::node_checks {

// External ports of NAT spaces are DNAT: the host must forward IPv4.
Check check_ip_forward(const NodeCheckOptions& options) {
  auto c = make_check("ip-forward", "the host forwards IPv4 (external ports of NAT spaces)");
  std::string value;
  std::ifstream(options.ip_forward_file) >> value;
  if (value == "1") {
    c.detail = "net.ipv4.ip_forward is 1";
    return c;
  }
  c.status = CheckStatus::Missing;
  c.detail = value.empty() ? "cannot read " + options.ip_forward_file
                           : "net.ipv4.ip_forward is " + value + ": external ports reach no guest";
  c.fix =
      "sysctl -w net.ipv4.ip_forward=1, and net.ipv4.ip_forward=1 in /etc/sysctl.d/ to keep it "
      "(libvirt's NAT networks turn it on too)";
  return c;
}

Check check_bridge(const std::string& bridge, const HostProbe* host) {
  auto c = make_check("bridge:" + bridge, "bridge " + bridge + " exists with a NIC");
  if (!host) {
    c.status = CheckStatus::Warn;
    c.required = false;
    c.detail = "not checked";
    return c;
  }
  if (!host->bridge_exists(bridge)) {
    c.status = CheckStatus::Missing;
    c.detail = "no bridge " + bridge +
               " on this host: spaces of templates that name it are "
               "refused at start";
    c.fix = "for guests on the LAN, create " + bridge +
            " in the host's network configuration with the uplink NIC as its port and the "
            "host's address moved from the NIC to the bridge in the same change (netplan: "
            "bridges: " +
            bridge + ": interfaces: [eth0] with the addresses; ifupdown: iface " + bridge +
            " with bridge_ports eth0), applied from a console, not over SSH: the NIC "
            "loses its address while it moves (docs/networking.md). For experiments a host-only "
            "bridge is enough: ip link add " +
            bridge + " type bridge && ip link set " + bridge + " up";
    return c;
  }
  const auto ports = host->bridge_ports(bridge);
  if (ports.empty()) {
    c.status = CheckStatus::Warn;
    c.required = false;
    c.detail = "bridge " + bridge + " has no enslaved NIC: it passes no traffic off the host";
    c.fix = "fine for experiments (guests reach this host only). To put " + bridge +
            " on the LAN, make the uplink NIC its port and move the host's address from the NIC "
            "to the bridge in one change of the host's network configuration, applied from a "
            "console: enslaving a NIC that holds the host's address cuts the host off the "
            "network (docs/networking.md)";
    return c;
  }
  c.detail = "ports: " + join(ports, ", ");
  return c;
}

Check check_network(const std::string& network, libvirt::Hypervisor* hypervisor) {
  auto c = make_check("network:" + network, "libvirt network " + network + " defined and active");
  if (!hypervisor) {
    c.status = CheckStatus::Missing;
    c.detail = "not checked: libvirt is not reachable";
    c.fix = "make libvirt reachable first";
    return c;
  }
  std::optional<libvirt::NetworkInfo> info;
  try {
    info = hypervisor->lookup_network(network);
  } catch (const std::exception& e) {
    c.status = CheckStatus::Missing;
    c.detail = e.what();
    return c;
  }
  if (!info) {
    c.status = CheckStatus::Missing;
    c.detail = "no libvirt network " + network;
    c.fix = network == "default"
                ? "virsh net-define /usr/share/libvirt/networks/default.xml && virsh net-start "
                  "default && virsh net-autostart default"
                : "virsh net-define NETWORK.xml (with <name>" + network +
                      "</name> and a <forward mode='nat'/>) && virsh net-start " + network +
                      " && virsh net-autostart " + network;
    return c;
  }
  if (!info->active) {
    c.status = CheckStatus::Missing;
    c.detail = "network " + network + " is defined but not active";
    c.fix = "virsh net-start " + network + " && virsh net-autostart " + network;
    return c;
  }
  c.detail = info->bridge.empty() ? "active" : "active on " + info->bridge;
  if (info->persistent && !info->autostart)
    c.detail += " (not autostarted: virsh net-autostart " + network + ")";
  return c;
}

}  // namespace bowline::engine::node_checks
