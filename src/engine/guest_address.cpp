#include "engine/guest_address.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include "util/strings.hpp"

namespace bowline::engine {

namespace {

struct Range {
  std::uint32_t first, last;
  const char* what;
};

// Addresses no guest's unicast NIC has (RFC 6890).
constexpr Range kNeverAGuest[] = {
    {0x00000000, 0x00ffffff, "an unspecified address (0.0.0.0/8)"},
    {0x7f000000, 0x7fffffff, "a loopback address (127.0.0.0/8)"},
    {0xa9fe0000, 0xa9feffff, "a link-local address (169.254.0.0/16)"},
    {0xe0000000, 0xefffffff, "a multicast address (224.0.0.0/4)"},
    {0xf0000000, 0xffffffff, "a reserved or broadcast address (240.0.0.0/4)"},
};

}  // namespace

std::set<std::uint32_t> host_ipv4_addresses() {
  std::set<std::uint32_t> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (auto* a = list; a; a = a->ifa_next)
    if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET)
      out.insert(ntohl(reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr));
  ::freeifaddrs(list);
  return out;
}

std::optional<std::string> guest_address_refusal(const spec::Ipv4Address& address,
                                                 const AddressBarriers& barriers) {
  const auto text = address.to_string();
  for (const auto& r : kNeverAGuest)
    if (address.value >= r.first && address.value <= r.last)
      return text + " is " + r.what + ", never a guest's";
  if (barriers.gateways.contains(address.value))
    return text + " is the network's gateway (the host's side of it), never a guest's";
  if (barriers.host.contains(address.value))
    return text + " is an address of this host, never a guest's";
  return std::nullopt;
}

std::optional<std::string> guest_address_refusal(const std::string& address,
                                                 const AddressBarriers& barriers) {
  const auto parsed = spec::Ipv4Address::parse(address);
  if (!parsed) return "\"" + address + "\" is not an IPv4 address";
  return guest_address_refusal(*parsed, barriers);
}

std::optional<libvirt::DhcpLease> lease_of(const std::vector<libvirt::DhcpLease>& leases,
                                           const std::string& network, const std::string& mac,
                                           std::int64_t now) {
  const auto own = util::to_lower(mac);
  // Expiry 0 is a lease that never runs out: it outlasts every other.
  const auto lasts = [](const libvirt::DhcpLease& l) {
    return l.expiry == 0 ? INT64_MAX : l.expiry;
  };
  std::optional<libvirt::DhcpLease> best;
  for (const auto& lease : leases) {
    if (lease.ipv6 || lease.network != network || util::to_lower(lease.mac) != own) continue;
    if (lease.expiry != 0 && lease.expiry <= now) continue;
    if (!spec::Ipv4Address::parse(lease.address)) continue;
    if (!best || lasts(lease) > lasts(*best)) best = lease;
  }
  return best;
}

}  // namespace bowline::engine
