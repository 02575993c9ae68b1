// LibvirtHypervisor's calls on libvirt's networks: look up and list them, read their DHCP
// leases, read and define network filters; and the parsers for a network's XML.
#include <pugixml.hpp>

#include <stdexcept>
#include <utility>

#include "libvirt/libvirt_connection.hpp"
#include "libvirt/libvirt_handles.hpp"
#include "libvirt/libvirt_hypervisor.hpp"
#include "libvirt/nwfilter.hpp"

namespace bowline::libvirt {

using namespace detail;

namespace {

NetworkInfo network_info(virNetworkPtr network) {
  NetworkInfo info;
  if (const char* name = virNetworkGetName(network)) info.name = name;
  const auto subject = "network \"" + info.name + "\"";
  char uuid[VIR_UUID_STRING_BUFLEN];
  if (virNetworkGetUUIDString(network, uuid) < 0) throw last_error(subject, "read the UUID");
  info.uuid = uuid;
  const int active = virNetworkIsActive(network);
  if (active < 0) throw last_error(subject, "read whether it is active");
  info.active = active == 1;
  const int persistent = virNetworkIsPersistent(network);
  if (persistent < 0) throw last_error(subject, "read whether it is persistent");
  info.persistent = persistent == 1;
  int autostart = 0;
  if (virNetworkGetAutostart(network, &autostart) < 0) {
    virResetLastError();
    autostart = 0;
  }
  info.autostart = autostart != 0;
  if (CString bridge{virNetworkGetBridgeName(network)})
    info.bridge = bridge.get();
  else
    virResetLastError();  // networks without a bridge (hostdev, direct)
  CString xml(virNetworkGetXMLDesc(network, 0));
  if (!xml) throw last_error(subject, "read the XML");
  info.dhcp_servers = parse_dhcp_servers(xml.get());
  info.one_lease_per_mac = parse_one_lease_per_mac(xml.get());
  return info;
}

}  // namespace

// ---- XML parsers -------------------------------------------------------------------------

std::vector<std::string> parse_dhcp_servers(std::string_view network_xml) {
  std::vector<std::string> out;
  pugi::xml_document doc;
  if (!doc.load_buffer(network_xml.data(), network_xml.size())) return out;
  for (const auto ip : doc.child("network").children("ip")) {
    const std::string_view family = ip.attribute("family").value();
    const std::string address = ip.attribute("address").value();
    if ((family.empty() || family == "ipv4") && ip.child("dhcp") && !address.empty())
      out.push_back(address);
  }
  return out;
}

bool parse_one_lease_per_mac(std::string_view network_xml) {
  pugi::xml_document doc;
  if (!doc.load_buffer(network_xml.data(), network_xml.size())) return false;
  // libvirt writes the namespace's elements with the prefix the definition used (dnsmasq:).
  const auto local = [](const char* name) {
    const std::string_view n(name);
    const auto colon = n.find(':');
    return colon == std::string_view::npos ? n : n.substr(colon + 1);
  };
  for (const auto options : doc.child("network").children())
    if (local(options.name()) == "options")
      for (const auto option : options.children())
        if (local(option.name()) == "option" &&
            std::string_view(option.attribute("value").value()) == "dhcp-ignore-clid")
          return true;
  return false;
}

// ---- LibvirtHypervisor -------------------------------------------------------------------

std::optional<NetworkInfo> LibvirtHypervisor::lookup_network(const std::string& name) {
  const auto connection = impl_->connection();
  virNetworkPtr raw = virNetworkLookupByName(connection.get(), name.c_str());
  if (!raw) {
    auto error = last_error("network \"" + name + "\"", "look up");
    if (error.is_no_network()) return std::nullopt;
    throw error;
  }
  const Network network(raw);
  try {
    return network_info(network.get());
  } catch (const HypervisorError& e) {
    if (e.is_no_network()) return std::nullopt;
    throw;
  }
}

std::vector<NetworkInfo> LibvirtHypervisor::list_networks() {
  const auto connection = impl_->connection();
  virNetworkPtr* raw = nullptr;
  const int n = virConnectListAllNetworks(connection.get(), &raw, 0);
  if (n < 0) throw last_error("libvirt at \"" + uri() + "\"", "list networks");
  std::vector<Network> networks;
  networks.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) networks.emplace_back(raw[i]);
  std::free(raw);
  std::vector<NetworkInfo> out;
  for (const auto& network : networks) {
    try {
      out.push_back(network_info(network.get()));
    } catch (const HypervisorError& e) {
      if (!e.is_no_network()) throw;
    }
  }
  return out;
}

namespace {

// One network's leases; a network stopped or removed meanwhile has none.
void append_leases(virNetworkPtr network, std::vector<DhcpLease>& out) {
  const char* name = virNetworkGetName(network);
  const std::string network_name = name ? name : "";
  virNetworkDHCPLeasePtr* leases = nullptr;
  const int n = virNetworkGetDHCPLeases(network, nullptr, &leases, 0);
  if (n < 0) {
    auto error = last_error("network \"" + network_name + "\"", "read the DHCP leases");
    if (error.is_no_network() || error.is_operation_invalid()) return;
    throw error;
  }
  for (int i = 0; i < n; ++i) {
    const auto* lease = leases[i];
    DhcpLease entry;
    entry.network = network_name;
    entry.mac = lease->mac ? lease->mac : "";
    entry.address = lease->ipaddr ? lease->ipaddr : "";
    entry.ipv6 = lease->type == VIR_IP_ADDR_TYPE_IPV6;
    entry.expiry = lease->expirytime;
    out.push_back(std::move(entry));
    virNetworkDHCPLeaseFree(leases[i]);
  }
  std::free(leases);
}

std::string filter_subject(const std::string& name) {
  return "network filter \"" + name + "\"";
}

// The filter and its XML; nullopt when libvirt has no filter of that name.
struct FoundFilter {
  std::string xml;
  std::string uuid;
};
std::optional<FoundFilter> find_filter(virConnectPtr connection, const std::string& name) {
  virNWFilterPtr raw = virNWFilterLookupByName(connection, name.c_str());
  if (!raw) {
    auto error = last_error(filter_subject(name), "look up");
    if (error.code() == VIR_ERR_NO_NWFILTER) return std::nullopt;
    throw error;
  }
  const NWFilter filter(raw);
  FoundFilter found;
  CString xml(virNWFilterGetXMLDesc(raw, 0));
  if (!xml) throw last_error(filter_subject(name), "read the XML");
  found.xml = xml.get();
  char uuid[VIR_UUID_STRING_BUFLEN];
  if (virNWFilterGetUUIDString(raw, uuid) < 0)
    throw last_error(filter_subject(name), "read the UUID");
  found.uuid = uuid;
  return found;
}

}  // namespace

std::vector<DhcpLease> LibvirtHypervisor::dhcp_leases() {
  const auto connection = impl_->connection();
  virNetworkPtr* raw = nullptr;
  const int n = virConnectListAllNetworks(connection.get(), &raw, VIR_CONNECT_LIST_NETWORKS_ACTIVE);
  if (n < 0) throw last_error("libvirt at \"" + uri() + "\"", "list networks");
  std::vector<Network> networks;
  networks.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) networks.emplace_back(raw[i]);
  std::free(raw);
  std::vector<DhcpLease> out;
  for (const auto& network : networks) append_leases(network.get(), out);
  return out;
}

std::optional<std::string> LibvirtHypervisor::nwfilter_xml(const std::string& name) {
  const auto connection = impl_->connection();
  if (auto found = find_filter(connection.get(), name)) return std::move(found->xml);
  return std::nullopt;
}

bool LibvirtHypervisor::ensure_nwfilter(const std::string& name, const std::string& xml) {
  if (filter_name(xml) != name)
    throw std::invalid_argument(filter_subject(name) + ": the XML defines \"" + filter_name(xml) +
                                "\"");
  const auto connection = impl_->connection();
  for (int attempt = 0;; ++attempt) {
    const auto found = find_filter(connection.get(), name);
    if (found && same_filter(found->xml, xml)) return false;
    // libvirt refuses a definition without the UUID of the filter it replaces.
    const auto definition = filter_with_uuid(xml, found ? found->uuid : "");
    if (virNWFilterPtr defined = virNWFilterDefineXML(connection.get(), definition.c_str())) {
      virNWFilterFree(defined);
      return true;
    }
    auto error = last_error(filter_subject(name), "define");
    // Another client defined it between our look and our define: look again, once.
    if (attempt > 0 || error.code() != VIR_ERR_OPERATION_FAILED) throw error;
  }
}

}  // namespace bowline::libvirt
