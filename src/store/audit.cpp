#include "store/audit.hpp"

#include <algorithm>

namespace bowline::store {

AuditEntry AuditRepository::append(AuditEntry entry) {
  if (entry.time == 0) entry.time = now();
  auto guard = db_.lock();
  db_.cached(
         "INSERT INTO audit_log (time, user_id, username, peer, action, space_id, status) "
         "VALUES (?, ?, ?, ?, ?, ?, ?)")
      ->bind_all(entry.time, entry.user_id, entry.username, entry.peer, entry.action,
                 entry.space_id, entry.status)
      .run();
  entry.id = db_.last_insert_rowid();
  return entry;
}

std::vector<AuditEntry> AuditRepository::list(const AuditFilter& filter) {
  auto guard = db_.lock();
  // NULL parameters match every row: one statement for every combination of filters.
  auto select = db_.cached(
      "SELECT id, time, user_id, username, peer, action, space_id, status FROM audit_log "
      "WHERE (?1 IS NULL OR username = ?1) AND (?2 IS NULL OR space_id = ?2) "
      "AND (?3 IS NULL OR time >= ?3) ORDER BY id DESC LIMIT ?4");
  select->bind_all(filter.username, filter.space_id, filter.since,
                   static_cast<std::int64_t>(filter.limit));
  std::vector<AuditEntry> out;
  while (select->step()) {
    AuditEntry e;
    e.id = select->column_int64(0);
    e.time = select->column_int64(1);
    if (!select->is_null(2)) e.user_id = select->column_int64(2);
    e.username = select->column_text(3);
    e.peer = select->column_text(4);
    e.action = select->column_text(5);
    if (!select->is_null(6)) e.space_id = select->column_text(6);
    e.status = static_cast<int>(select->column_int64(7));
    out.push_back(std::move(e));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

int AuditRepository::prune(std::int64_t before) {
  auto guard = db_.lock();
  return db_.cached("DELETE FROM audit_log WHERE time < ?")->bind_all(before).run();
}

}  // namespace bowline::store
