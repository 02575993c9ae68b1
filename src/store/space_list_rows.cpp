#include "store/space_list_rows.hpp"

#include <string>

namespace bowline::store {
namespace {

constexpr const char* kColumns =
    "s.applied_template_revision, s.created_at, s.desired_state, s.domain_name, s.error, s.id, "
    "s.ip, s.name, s.node, u.username, s.state, t.name, t.revision, s.updated_at, s.owner_id";
constexpr const char* kJoins =
    " LEFT JOIN users u ON u.id = s.owner_id LEFT JOIN templates t ON t.id = s.template_id";

// The kColumns of `row`, starting at column `at`.
SpaceListRow read_row(Statement& row, int at) {
  SpaceListRow r;
  r.applied_revision = row.column_int64(at + 0);
  r.created_at = row.column_int64(at + 1);
  r.desired_state = row.column_view(at + 2);
  r.domain = row.column_view(at + 3);
  r.error = row.column_view(at + 4);
  r.id = row.column_view(at + 5);
  if (!row.is_null(at + 6)) r.ip = row.column_view(at + 6);
  r.name = row.column_view(at + 7);
  r.node = row.column_view(at + 8);
  r.owner = row.column_view(at + 9);
  r.state = row.column_view(at + 10);
  r.template_name = row.column_view(at + 11);
  r.template_revision = row.column_int64(at + 12);
  r.updated_at = row.column_int64(at + 13);
  if (!row.is_null(at + 14)) r.owner_id = row.column_int64(at + 14);
  return r;
}

}  // namespace

void SpaceListRows::each(std::optional<std::int64_t> owner_id,
                         const std::function<void(const SpaceListRow&)>& visit) {
  auto guard = db_.lock();
  auto select = db_.cached(std::string("SELECT ") + kColumns + " FROM spaces s" + kJoins +
                           (owner_id ? " WHERE s.owner_id = ?" : "") +
                           // rowid is creation order too; ordering by created_at made SQLite
                           // walk an index and sort (3x slower at 10,000 spaces).
                           " ORDER BY s.rowid");
  if (owner_id) select->bind(1, *owner_id);
  while (select->step()) visit(read_row(*select, 0));
}

std::int64_t SpaceListRows::newest_change() {
  auto guard = db_.lock();
  auto newest = db_.cached("SELECT coalesce(max(seq), 0) FROM space_changes");
  return newest->step() ? newest->column_int64(0) : 0;
}

void SpaceListRows::changes_since(
    std::int64_t seq, const std::function<void(std::int64_t rowid, const SpaceListRow*)>& visit) {
  auto guard = db_.lock();
  auto changed = db_.cached(std::string("SELECT c.space_rowid, ") + kColumns +
                            " FROM space_changes c LEFT JOIN spaces s ON s.rowid = c.space_rowid" +
                            kJoins + " WHERE c.seq > ?");
  changed->bind(1, seq);
  while (changed->step()) {
    const auto rowid = changed->column_int64(0);
    if (changed->is_null(1 + 5)) {  // the space is gone
      visit(rowid, nullptr);
      continue;
    }
    const auto row = read_row(*changed, 1);
    visit(rowid, &row);
  }
}

}  // namespace bowline::store
