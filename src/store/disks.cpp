#include "store/disks.hpp"

#include <string>

namespace bowline::store {

namespace {

Disk read_disk(const Statement& row) {
  Disk disk;
  disk.id = row.column_int64(0);
  disk.owner_id = row.column_int64(1);
  disk.name = row.column_text(2);
  disk.path = row.column_text(3);
  disk.size_bytes = row.column_int64(4);
  disk.source = row.column_text(5);
  disk.created_at = row.column_int64(6);
  return disk;
}

constexpr const char* kSelect =
    "SELECT id, owner_id, name, path, size_bytes, source, created_at FROM disks ";

}  // namespace

Disk DiskRepository::create(std::int64_t owner_id, std::string_view name, std::string_view path,
                            std::int64_t size_bytes, std::string_view source) {
  auto guard = db_.lock();
  Disk disk{0,    owner_id, std::string(name), std::string(path), size_bytes, std::string(source),
            now()};
  try {
    db_.cached(
           "INSERT INTO disks (owner_id, name, path, size_bytes, source, created_at) VALUES (?, "
           "?, ?, ?, ?, ?)")
        ->bind_all(owner_id, name, path, size_bytes, source, disk.created_at)
        .run();
  } catch (const SqliteError& e) {
    if (violates_foreign_key(e)) throw NotFoundError("no user with id " + std::to_string(owner_id));
    if (violates_unique(e, "disks.path"))
      throw ConflictError("another disk has the file " + std::string(path));
    if (violates_unique(e, "disks.owner_id"))
      throw ConflictError("the owner already has a disk named " + std::string(name));
    throw;
  }
  disk.id = db_.last_insert_rowid();
  return disk;
}

std::optional<Disk> DiskRepository::find(std::int64_t owner_id, std::string_view name) {
  auto guard = db_.lock();
  auto select = db_.cached(std::string(kSelect) + "WHERE owner_id = ? AND name = ?");
  select->bind_all(owner_id, name);
  if (!select->step()) return std::nullopt;
  return read_disk(*select);
}

std::vector<Disk> DiskRepository::list() {
  auto guard = db_.lock();
  auto select = db_.cached(std::string(kSelect) + "ORDER BY owner_id, name");
  std::vector<Disk> out;
  while (select->step()) out.push_back(read_disk(*select));
  return out;
}

std::vector<Disk> DiskRepository::list_for_owner(std::int64_t owner_id) {
  auto guard = db_.lock();
  auto select = db_.cached(std::string(kSelect) + "WHERE owner_id = ? ORDER BY name");
  select->bind(1, owner_id);
  std::vector<Disk> out;
  while (select->step()) out.push_back(read_disk(*select));
  return out;
}

void DiskRepository::set_size(std::int64_t id, std::int64_t size_bytes) {
  auto guard = db_.lock();
  db_.cached("UPDATE disks SET size_bytes = ? WHERE id = ?")->bind_all(size_bytes, id).run();
}

bool DiskRepository::remove(std::int64_t id) {
  auto guard = db_.lock();
  return db_.cached("DELETE FROM disks WHERE id = ?")->bind(1, id).run() > 0;
}

}  // namespace bowline::store
