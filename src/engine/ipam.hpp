// Addresses of bridged spaces: each template's range (network.ip_range_start..ip_range_end),
// leased per bridge so that templates on one bridge share one address space, whatever their
// subnets and ranges. The rule of a usable address is written here once, for the next free
// address, a chosen one (--ip) and a new one (set-ip).
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>

#include "spec/spec.hpp"
#include "store/store.hpp"

namespace bowline::engine {

class Ipam {
 public:
  // `host_addresses`: this host's own IPv4 addresses, which no space gets; unset: the host's
  // interfaces now (engine/guest_address.hpp).
  explicit Ipam(store::Store& store, std::function<std::set<std::uint32_t>()> host_addresses = {});

  // The key leases of this network are kept under: "bridge:br0" (the bridge, not the range).
  static std::string network_key(const spec::Network& network);
  // Empty when `address` is one a space of this network may have: inside the template's range
  // (not only its subnet), and not the network's, broadcast or gateway address, nor one of
  // this host's. Else why not.
  std::string unusable(const spec::Network& network, const std::string& address) const;

  // The lowest free address of the range for the space (its own when it has one); EngineError
  // (Conflict) when the range is exhausted.
  store::IpLease lease_next(const spec::Network& network, const std::string& space_id);
  // Exactly `address` for the space, in place of the one it has: EngineError Invalid when the
  // rule refuses it, Conflict when another space holds it.
  store::IpLease lease_exact(const spec::Network& network, const std::string& space_id,
                             const std::string& address);

 private:
  std::set<std::uint32_t> reserved(const spec::Network& network) const;
  store::Store& store_;
  std::set<std::uint32_t> host_;
};

}  // namespace bowline::engine
