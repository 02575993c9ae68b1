#include "store/snapshots.hpp"

namespace bowline::store {

namespace {

Snapshot read_snapshot(const Statement& row) {
  Snapshot s;
  s.id = row.column_int64(0);
  s.space_id = row.column_text(1);
  s.name = row.column_text(2);
  s.memory = row.column_int64(3) != 0;
  s.best_effort = row.column_int64(4) != 0;
  s.running = row.column_int64(5) != 0;
  s.template_revision = row.column_int64(6);
  s.applied_parts = row.column_text(7);
  s.size_bytes = row.column_int64(8);
  s.created_at = row.column_int64(9);
  return s;
}

constexpr const char* kSelect =
    "SELECT id, space_id, name, memory, best_effort, running, template_revision, applied_parts, "
    "size_bytes, created_at FROM snapshots ";

}  // namespace

Snapshot SnapshotRepository::create(Snapshot s) {
  auto guard = db_.lock();
  s.created_at = now();
  try {
    db_.cached(
           "INSERT INTO snapshots (space_id, name, memory, best_effort, running, "
           "template_revision, applied_parts, size_bytes, created_at) VALUES (?, ?, ?, ?, ?, ?, "
           "?, ?, ?)")
        ->bind_all(s.space_id, s.name, std::int64_t{s.memory}, std::int64_t{s.best_effort},
                   std::int64_t{s.running}, s.template_revision, s.applied_parts, s.size_bytes,
                   s.created_at)
        .run();
  } catch (const SqliteError& e) {
    if (violates_foreign_key(e)) throw NotFoundError("no space with id " + s.space_id);
    if (violates_unique(e, "snapshots.space_id"))
      throw ConflictError("the space already has a snapshot named " + s.name);
    throw;
  }
  s.id = db_.last_insert_rowid();
  return s;
}

std::optional<Snapshot> SnapshotRepository::find(std::string_view space_id, std::string_view name) {
  auto guard = db_.lock();
  auto select = db_.cached(std::string(kSelect) + "WHERE space_id = ? AND name = ?");
  select->bind_all(space_id, name);
  if (!select->step()) return std::nullopt;
  return read_snapshot(*select);
}

std::vector<Snapshot> SnapshotRepository::list_for_space(std::string_view space_id) {
  auto guard = db_.lock();
  auto select = db_.cached(std::string(kSelect) + "WHERE space_id = ? ORDER BY created_at, id");
  select->bind(1, space_id);
  std::vector<Snapshot> out;
  while (select->step()) out.push_back(read_snapshot(*select));
  return out;
}

std::vector<Snapshot> SnapshotRepository::list() {
  auto guard = db_.lock();
  auto select = db_.cached(std::string(kSelect) + "ORDER BY space_id, created_at, id");
  std::vector<Snapshot> out;
  while (select->step()) out.push_back(read_snapshot(*select));
  return out;
}

bool SnapshotRepository::remove(std::int64_t id) {
  auto guard = db_.lock();
  return db_.cached("DELETE FROM snapshots WHERE id = ?")->bind(1, id).run() > 0;
}

}  // namespace bowline::store
