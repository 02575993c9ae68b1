#include "store/operations.hpp"

#include <algorithm>
#include <limits>

namespace bowline::store {

namespace {

constexpr const char* kOperationColumns =
    "id, space_id, kind, state, step, progress, error, created_at, updated_at, finished_at";

Operation read_operation(const Statement& row) {
  Operation op;
  op.id = row.column_int64(0);
  op.space_id = row.column_optional_text(1);
  op.kind = row.column_text(2);
  auto state = parse_operation_state(row.column_text(3));
  if (!state)
    throw StoreError("operation " + std::to_string(op.id) + ": unknown state '" +
                     row.column_text(3) + "'");
  op.state = *state;
  op.step = row.column_text(4);
  op.progress = row.column_int(5);
  op.error = row.column_text(6);
  op.created_at = row.column_int64(7);
  op.updated_at = row.column_int64(8);
  op.finished_at = row.column_optional_int64(9);
  return op;
}

Event read_event(const Statement& row) {
  Event event;
  event.seq = row.column_int64(0);
  event.time = row.column_int64(1);
  event.kind = row.column_text(2);
  event.space_id = row.column_optional_text(3);
  event.payload = nlohmann::json::parse(row.column_text(4), nullptr, false);
  if (event.payload.is_discarded())
    throw StoreError("event " + std::to_string(event.seq) + ": payload is not JSON");
  return event;
}

}  // namespace

// ---- operations ---------------------------------------------------------------------------

Operation OperationRepository::create(const std::optional<std::string>& space_id,
                                      std::string_view kind) {
  auto guard = db_.lock();
  auto when = now();
  db_.cached(
         "INSERT INTO operations (space_id, kind, state, created_at, updated_at) "
         "VALUES (?, ?, ?, ?, ?)")
      ->bind_all(space_id, kind, to_string(OperationState::Pending), when, when)
      .run();
  return *get(db_.last_insert_rowid());
}

std::optional<Operation> OperationRepository::get(std::int64_t id) {
  auto guard = db_.lock();
  auto select =
      db_.cached(std::string("SELECT ") + kOperationColumns + " FROM operations WHERE id = ?");
  if (!select->bind(1, id).step()) return std::nullopt;
  return read_operation(*select);
}

std::vector<Operation> OperationRepository::list_for_space(std::string_view space_id) {
  auto guard = db_.lock();
  auto select = db_.cached(std::string("SELECT ") + kOperationColumns +
                           " FROM operations WHERE space_id = ? ORDER BY id DESC");
  select->bind(1, space_id);
  std::vector<Operation> out;
  while (select->step()) out.push_back(read_operation(*select));
  return out;
}

std::vector<Operation> OperationRepository::list_unfinished() {
  auto guard = db_.lock();
  auto select = db_.cached(std::string("SELECT ") + kOperationColumns +
                           " FROM operations WHERE finished_at IS NULL ORDER BY id");
  std::vector<Operation> out;
  while (select->step()) out.push_back(read_operation(*select));
  return out;
}

int OperationRepository::progress(std::int64_t id, std::string_view step, int percent) {
  Transaction transaction(db_);
  auto op = get(id);
  if (!op) throw NotFoundError("no operation with id " + std::to_string(id));
  if (op->finished()) throw StoreError("operation " + std::to_string(id) + " has already finished");
  // An operation's progress only goes forward, whatever its steps report.
  const int recorded = std::max(op->progress, std::clamp(percent, 0, 100));
  db_.cached("UPDATE operations SET state = ?, step = ?, progress = ?, updated_at = ? WHERE id = ?")
      ->bind_all(to_string(OperationState::Running), step, recorded, now(), id)
      .run();
  transaction.commit();
  return recorded;
}

void OperationRepository::finish(std::int64_t id, OperationState state, std::string_view error) {
  Transaction transaction(db_);
  auto op = get(id);
  if (!op) throw NotFoundError("no operation with id " + std::to_string(id));
  if (op->finished()) throw StoreError("operation " + std::to_string(id) + " has already finished");
  auto when = now();
  db_.cached(
         "UPDATE operations SET state = ?, error = ?, progress = ?, updated_at = ?, "
         "finished_at = ? WHERE id = ?")
      ->bind_all(to_string(state), error, state == OperationState::Succeeded ? 100 : op->progress,
                 when, when, id)
      .run();
  transaction.commit();
}

void OperationRepository::succeed(std::int64_t id) {
  finish(id, OperationState::Succeeded, {});
}

void OperationRepository::fail(std::int64_t id, std::string_view error) {
  finish(id, OperationState::Failed, error);
}

// ---- events -------------------------------------------------------------------------------

Event EventRepository::append(std::string_view kind, const std::optional<std::string>& space_id,
                              const nlohmann::json& payload) {
  auto guard = db_.lock();
  Event event;
  event.time = now();
  event.kind = kind;
  event.space_id = space_id;
  event.payload = payload;
  db_.cached("INSERT INTO events (time, kind, space_id, payload) VALUES (?, ?, ?, ?)")
      ->bind_all(event.time, kind, space_id, payload.dump())
      .run();
  event.seq = db_.last_insert_rowid();
  return event;
}

std::vector<Event> EventRepository::events_since(std::int64_t after, std::size_t limit) {
  auto guard = db_.lock();
  auto select = db_.cached(
      "SELECT seq, time, kind, space_id, payload FROM events WHERE seq > ? ORDER BY seq "
      "LIMIT ?");
  auto capped = std::min<std::size_t>(limit, std::numeric_limits<std::int64_t>::max());
  select->bind_all(after, static_cast<std::int64_t>(capped));
  std::vector<Event> out;
  while (select->step()) out.push_back(read_event(*select));
  return out;
}

std::int64_t EventRepository::latest_seq() {
  auto guard = db_.lock();
  // sqlite_sequence remembers the highest seq ever handed out, even after pruning.
  auto select =
      db_.cached("SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'events'");
  select->step();
  return select->column_int64(0);
}

int OperationRepository::prune_finished_before(std::int64_t time) {
  auto guard = db_.lock();
  return db_.cached("DELETE FROM operations WHERE finished_at IS NOT NULL AND finished_at < ?")
      ->bind(1, time)
      .run();
}

int EventRepository::prune_before(std::int64_t time) {
  auto guard = db_.lock();
  return db_.cached("DELETE FROM events WHERE time < ?")->bind(1, time).run();
}

}  // namespace bowline::store
