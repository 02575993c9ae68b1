#include "engine/dhcp_lease_check.hpp"

namespace bowline::engine {

Check check_one_lease_per_mac(const std::string& network, libvirt::Hypervisor* hypervisor) {
  Check c;
  c.name = "dhcp:" + network;
  c.title = "libvirt network " + network + " leases one address per guest NIC";
  c.required = false;
  std::optional<libvirt::NetworkInfo> info;
  try {
    if (hypervisor) info = hypervisor->lookup_network(network);
  } catch (const std::exception& e) {
    c.status = CheckStatus::Warn;
    c.detail = e.what();
    return c;
  }
  if (!info || info->dhcp_servers.empty()) {
    c.detail = info ? "it has no DHCP server" : "not checked: no such network (see its check)";
    return c;
  }
  if (info->one_lease_per_mac) {
    c.detail = "its dnsmasq has dhcp-ignore-clid";
    return c;
  }
  c.status = CheckStatus::Warn;
  c.detail =
      "its dnsmasq leases by the client id a guest sends: one guest can take many leases and "
      "empty the pool for the others";
  c.fix = "virsh net-edit " + network +
          ": give <network> the attribute "
          "xmlns:dnsmasq='http://libvirt.org/schemas/network/dnsmasq/1.0' and the element "
          "<dnsmasq:options><dnsmasq:option value='dhcp-ignore-clid'/></dnsmasq:options>, then "
          "virsh net-destroy " +
          network + " && virsh net-start " + network +
          " (running guests keep their addresses: they renew them)";
  return c;
}

}  // namespace bowline::engine
