#include "engine/ipam.hpp"

#include <set>

#include "engine/engine.hpp"

namespace bowline::engine {

namespace {

std::set<std::uint32_t> reserved(const spec::Network& n) {
  const auto& net = *n.cidr;
  return {net.address.value, net.broadcast().value, n.gateway.value_or(net.first_usable()).value};
}

std::string range_text(const spec::Network& n) {
  return n.range_start->to_string() + "-" + n.range_end->to_string();
}

}  // namespace

std::string Ipam::network_key(const spec::Network& n) {
  return "bridge:" + n.bridge + ":" + n.cidr->to_string();
}

std::string Ipam::unusable(const spec::Network& n, const std::string& text) {
  const auto address = spec::Ipv4Address::parse(text);
  if (!address) return "\"" + text + "\" is not an IPv4 address";
  if (address->value < n.range_start->value || address->value > n.range_end->value)
    return text + " is outside the template's address range " + range_text(n);
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
