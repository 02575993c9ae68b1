// Snapshots of spaces: what bowline says of each. Their data is libvirt's business
// (internal qcow2 snapshots, libvirt/hypervisor.hpp); a row is written once libvirt has made
// the snapshot and removed once libvirt has deleted it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/repository.hpp"

namespace bowline::store {

struct Snapshot {
  std::int64_t id = 0;
  std::string space_id;
  std::string name;                    // a DNS-1123 label, unique among the space's snapshots
  bool memory = false;                 // restoring it brings back the running guest
  bool best_effort = false;            // taken while running without the guest's filesystems frozen
  bool running = false;                // the space was running when it was taken
  std::int64_t template_revision = 0;  // the revision the space ran then
  std::string applied_parts;           // and the parts it was made of (plan/change_parts)
  std::int64_t size_bytes = 0;         // the bytes its disks held, counted against the quota
  std::int64_t created_at = 0;         // unix ms
};

class SnapshotRepository : public Repository {
 public:
  using Repository::Repository;

  // Throws ConflictError when the space has a snapshot of that name, NotFoundError when the
  // space does not exist. `snapshot.id` and `created_at` are set here.
  Snapshot create(Snapshot snapshot);
  std::optional<Snapshot> find(std::string_view space_id, std::string_view name);
  std::vector<Snapshot> list_for_space(std::string_view space_id);  // oldest first
  std::vector<Snapshot> list();                                     // every space's
  bool remove(std::int64_t id);
};

}  // namespace bowline::store
