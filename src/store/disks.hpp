// Disks as objects: a user's disk by name. The files are the engine's business
// (engine/disk_files.hpp); this is only the rows.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/records.hpp"
#include "store/repository.hpp"

namespace bowline::store {

// A disk of its own (bowline disk create): its owner's, attached by name by their templates'
// `disks:`, kept when the spaces using it are deleted.
struct Disk {
  std::int64_t id = 0;
  std::int64_t owner_id = 0;
  std::string name;             // a DNS-1123 label, unique among the owner's disks
  std::string path;             // the qcow2 file
  std::int64_t size_bytes = 0;  // virtual size
  std::string source;           // "image debian-12", "size 10Gi", "space dev", "import of x"
  std::int64_t created_at = 0;
};

class DiskRepository : public Repository {
 public:
  using Repository::Repository;

  // Throws ConflictError when the owner has a disk of that name or the path is taken,
  // NotFoundError when the owner does not exist.
  Disk create(std::int64_t owner_id, std::string_view name, std::string_view path,
              std::int64_t size_bytes, std::string_view source);
  std::optional<Disk> find(std::int64_t owner_id, std::string_view name);
  std::vector<Disk> list();  // by owner, then name
  std::vector<Disk> list_for_owner(std::int64_t owner_id);
  void set_size(std::int64_t id, std::int64_t size_bytes);
  bool remove(std::int64_t id);
};

}  // namespace bowline::store
