// bowline's libvirt network filter, which every NIC of a space references (domain_xml.cpp): the
// guest sends only from its MAC and its IP address, ARP only for them, IPv4 and ARP only (no
// other layer-2 protocol, IPv6 included), and no DHCP server's answers, so that no guest answers
// another's DHCP. It says what libvirt's clean-traffic says, plus the DHCP rule, in one flat
// chain of its own (nwfilter.cpp says why). The NIC says which address is its own: `IP` (a
// bridged space's fixed address) or `CTRL_IP_LEARNING=dhcp` (what the network's DHCP server
// leases, snooped by libvirt; `DHCPSERVER`: the only servers believed). The node defines the
// filter before it defines a domain (Hypervisor::ensure_nwfilter).
#pragma once

#include <string>
#include <string_view>

namespace bowline::libvirt {

inline constexpr const char* kTrafficFilter = "bowline-clean-traffic";

// The filter's definition (no UUID: libvirt gives one, ensure_nwfilter keeps it).
std::string traffic_filter_xml();

// Whether two filter definitions say the same thing: the same elements, attributes and text,
// whatever the UUID, the attributes' order, whitespace and comments. Unreadable XML is never
// the same as anything.
bool same_filter(std::string_view a, std::string_view b);

// The name attribute of a <filter> document; empty when it is not one.
std::string filter_name(std::string_view xml);

// `xml` with <uuid> set to `uuid` (replaced or added first); `xml` unchanged when `uuid` is
// empty. Throws std::invalid_argument when `xml` is not a <filter> document.
std::string filter_with_uuid(std::string_view xml, const std::string& uuid);

}  // namespace bowline::libvirt
