#include "engine/ipam.hpp"

#include <set>

#include "engine/engine.hpp"
#include "engine/guest_address.hpp"

namespace bowline::engine {

namespace {

std::string range_text(const spec::Network& n) {
  return n.range_start->to_string() + "-" + n.range_end->to_string();
}

}  // namespace

Ipam::Ipam(store::Store& store, std::function<std::set<std::uint32_t>()> host_addresses)
    : store_(store), host_(host_addresses ? host_addresses() : host_ipv4_addresses()) {}

// The network's own, broadcast and gateway addresses, and this host's within the range (a
// guest given one would answer for the host, or the host for it).
std::set<std::uint32_t> Ipam::reserved(const spec::Network& n) const {
  const auto& net = *n.cidr;
  std::set<std::uint32_t> out{net.address.value, net.broadcast().value,
                              n.gateway.value_or(net.first_usable()).value};
  for (const auto a : host_)
    if (a >= n.range_start->value && a <= n.range_end->value) out.insert(a);
  return out;
}

// One address space per bridge, whatever range a template gives it: two templates whose
// ranges overlap on one bridge must never hand out one address twice.
std::string Ipam::network_key(const spec::Network& n) {
  return "bridge:" + n.bridge;
}

std::string Ipam::unusable(const spec::Network& n, const std::string& text) const {
  const auto address = spec::Ipv4Address::parse(text);
  if (!address) return "\"" + text + "\" is not an IPv4 address";
  if (address->value < n.range_start->value || address->value > n.range_end->value)
    return text + " is outside the template's address range " + range_text(n);
  if (host_.contains(address->value)) return text + " is an address of this host";
  if (reserved(n).count(address->value))
    return text + " is the network's, broadcast or gateway address of " + n.cidr->to_string();
  return {};
}

store::IpLease Ipam::lease_next(const spec::Network& n, const std::string& space_id) {
  auto lease = store_.leases().allocate_ip(network_key(n), space_id, n.range_start->value,
                                           n.range_end->value, reserved(n));
  if (!lease)
    throw EngineError(EngineError::Kind::Conflict,
                      "the address range " + range_text(n) + " is exhausted");
  return *lease;
}

store::IpLease Ipam::lease_exact(const spec::Network& n, const std::string& space_id,
                                 const std::string& address) {
  if (const auto problem = unusable(n, address); !problem.empty())
    throw EngineError(EngineError::Kind::Invalid, problem);
  const auto value = spec::Ipv4Address::parse(address)->value;
  if (const auto holder = store_.leases().holder(network_key(n), value);
      holder && holder->space_id != space_id)
    throw EngineError(EngineError::Kind::Conflict, address + " is already held by another space");
  return store_.leases().change_ip(network_key(n), space_id, value);
}

}  // namespace bowline::engine
