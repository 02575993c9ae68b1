// Ports of the host that publish ports of spaces (template `external`, PortList, on libvirt):
// each is a space's for its life, so the address a user was given keeps working across stops
// and starts. The keys make a duplicate impossible, as for IP leases.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "store/records.hpp"
#include "store/repository.hpp"

namespace bowline::store {

class HostPortRepository : public Repository {
 public:
  using Repository::Repository;

  // The lowest free host port in [first, last] for the space's guest port; the one it has
  // already when it has one. nullopt when the range is exhausted. NotFoundError for an unknown
  // space.
  std::optional<HostPort> allocate(std::string_view space_id, std::string_view protocol,
                                   std::uint16_t guest_port, std::uint16_t first,
                                   std::uint16_t last);
  std::vector<HostPort> of_space(std::string_view space_id);  // by guest port
  // Drops the space's ports (a space's deletion does too); returns how many.
  int release(std::string_view space_id);
  void release_one(std::string_view space_id, std::string_view protocol, std::uint16_t guest_port);
};

}  // namespace bowline::store
