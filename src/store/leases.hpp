// IPv4 leases: which space holds which address of which network. The table's keys make a
// duplicate impossible (one holder per address, one address per space and network), and
// allocation runs in one IMMEDIATE transaction, so concurrent creates, even through several
// connections, never share an address.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "store/records.hpp"
#include "store/repository.hpp"

namespace bowline::store {

class LeaseRepository : public Repository {
 public:
  using Repository::Repository;

  // The lowest address in [first, last] that is neither in `excluded` (network, gateway,
  // broadcast, reserved) nor leased on `network_key`, leased to the space. When the space
  // already holds an address on this network, that lease is returned unchanged. nullopt when
  // the range is exhausted. NotFoundError for an unknown space; StoreError when first > last.
  std::optional<IpLease> allocate_ip(std::string_view network_key, std::string_view space_id,
                                     std::uint32_t first, std::uint32_t last,
                                     const std::set<std::uint32_t>& excluded);
  // Gives the space exactly `ip` on the network (replacing its lease there, or making one).
  // ConflictError naming the holder when another space has it. Range checks are the caller's.
  IpLease change_ip(std::string_view network_key, std::string_view space_id, std::uint32_t ip);
  // Drops every lease of the space; returns how many.
  int release_ips(std::string_view space_id);

  std::optional<IpLease> lease_of(std::string_view space_id, std::string_view network_key);
  std::vector<IpLease> leases_of(std::string_view space_id);
  std::optional<IpLease> holder(std::string_view network_key, std::uint32_t ip);
  std::vector<IpLease> list(std::string_view network_key);  // by address
};

}  // namespace bowline::store
