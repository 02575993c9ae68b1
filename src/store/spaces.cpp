#include "store/spaces.hpp"

#include <functional>

namespace bowline::store {

namespace {

constexpr const char* kSpaceColumns =
    "id, name, owner_id, template_id, applied_template_revision, desired_state, state, error, "
    "ip, uuid, vnc_password, domain_name, node, pool_id, created_at, updated_at, applied_parts, "
    "host_key, host_key_public, terminal_key, terminal_key_public, suspended_at, suspend_reason, "
    "disk_bytes, instance_id";

Space read_space(const Statement& row) {
  Space space;
  space.id = row.column_text(0);
  space.name = row.column_text(1);
  space.owner_id = row.column_optional_int64(2);
  space.template_id = row.column_int64(3);
  space.applied_template_revision = row.column_int64(4);
  auto desired = parse_desired_state(row.column_text(5));
  auto state = parse_space_state(row.column_text(6));
  if (!desired || !state)
    throw StoreError("space " + space.id + ": unknown state '" + row.column_text(6) +
                     "' or desired state '" + row.column_text(5) + "'");
  space.desired_state = *desired;
  space.state = *state;
  space.error = row.column_text(7);
  space.ip = row.column_optional_text(8);
  space.uuid = row.column_text(9);
  space.vnc_password = row.column_text(10);
  space.domain_name = row.column_text(11);
  space.node = row.column_text(12);
  space.pool_id = row.column_optional_int64(13);
  space.created_at = row.column_int64(14);
  space.updated_at = row.column_int64(15);
  space.applied_parts = row.column_text(16);
  space.host_key = row.column_text(17);
  space.host_key_public = row.column_text(18);
  space.terminal_key = row.column_text(19);
  space.terminal_key_public = row.column_text(20);
  space.suspended_at = row.column_int64(21);
  space.suspend_reason = row.column_text(22);
  space.disk_bytes = row.column_int64(23);
  space.instance_id = row.column_text(24);
  return space;
}

std::string select_sql(const std::string& condition) {
  return std::string("SELECT ") + kSpaceColumns + " FROM spaces" + condition;
}

}  // namespace

Space SpaceRepository::create(const NewSpace& space) {
  if (space.id.empty() || space.name.empty() || space.domain_name.empty())
    throw StoreError("a space needs an id, a name and a domain name");
  auto guard = db_.lock();
  auto when = now();
  try {
    db_.cached(
           "INSERT INTO spaces (id, name, owner_id, template_id, desired_state, state, uuid, "
           "vnc_password, domain_name, node, pool_id, created_at, updated_at, host_key, "
           "host_key_public, terminal_key, terminal_key_public) "
           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        ->bind_all(space.id, space.name, space.owner_id, space.template_id,
                   to_string(space.desired_state), to_string(space.state), space.uuid,
                   space.vnc_password, space.domain_name, space.node, space.pool_id, when, when,
                   space.host_key, space.host_key_public, space.terminal_key,
                   space.terminal_key_public)
        .run();
  } catch (const SqliteError& e) {
    if (violates_unique(e, "spaces.domain_name"))
      throw ConflictError("the domain name '" + space.domain_name + "' is already in use");
    if (violates_unique(e, "spaces.name"))
      throw ConflictError("this user already has a space named '" + space.name + "'");
    if (violates_unique(e, "spaces.id"))
      throw ConflictError("a space with id '" + space.id + "' already exists");
    if (violates_foreign_key(e))
      throw NotFoundError("cannot create space '" + space.name +
                          "': its owner, template or pool does not exist");
    throw;
  }
  return *get(space.id);
}

std::optional<Space> SpaceRepository::get(std::string_view id) {
  auto guard = db_.lock();
  auto select = db_.cached(select_sql(" WHERE id = ?"));
  if (!select->bind(1, id).step()) return std::nullopt;
  return read_space(*select);
}

std::optional<Space> SpaceRepository::find_by_domain_name(std::string_view domain_name) {
  auto guard = db_.lock();
  auto select = db_.cached(select_sql(" WHERE domain_name = ?"));
  if (!select->bind(1, domain_name).step()) return std::nullopt;
  return read_space(*select);
}

std::optional<Space> SpaceRepository::find_by_name(std::int64_t owner_id, std::string_view name) {
  auto guard = db_.lock();
  auto select = db_.cached(select_sql(" WHERE owner_id = ? AND name = ?"));
  if (!select->bind_all(owner_id, name).step()) return std::nullopt;
  return read_space(*select);
}

std::vector<Space> SpaceRepository::select_where(const std::string& condition,
                                                 std::optional<std::int64_t> key) {
  auto guard = db_.lock();
  auto select = db_.cached(select_sql(condition + " ORDER BY created_at, rowid"));
  if (key) select->bind(1, *key);
  std::vector<Space> out;
  while (select->step()) out.push_back(read_space(*select));
  return out;
}

std::vector<Space> SpaceRepository::list() {
  return select_where("", std::nullopt);
}

std::vector<Space> SpaceRepository::list_for_owner(std::int64_t owner_id) {
  return select_where(" WHERE owner_id = ?", owner_id);
}

std::vector<Space> SpaceRepository::list_for_pool(std::int64_t pool_id) {
  return select_where(" WHERE pool_id = ?", pool_id);
}

std::vector<Space> SpaceRepository::list_for_template(std::int64_t template_id) {
  return select_where(" WHERE template_id = ?", template_id);
}

std::vector<Space> SpaceRepository::list_running_without_ip() {
  return select_where(" WHERE state = 'running' AND ip IS NULL", std::nullopt);
}

std::int64_t SpaceRepository::count() {
  auto guard = db_.lock();
  auto select = db_.cached("SELECT count(*) FROM spaces");
  select->step();
  return select->column_int64(0);
}

void SpaceRepository::update_one(std::string_view id, const std::string& assignments,
                                 const std::function<void(Statement&)>& bind_values) {
  auto guard = db_.lock();
  // Values bind from 3: ?1 is updated_at, ?2 the id.
  auto update = db_.cached("UPDATE spaces SET updated_at = ?1, " + assignments + " WHERE id = ?2");
  update->bind(1, now()).bind(2, id);
  bind_values(*update);
  if (update->run() == 0) throw NotFoundError("no space with id '" + std::string(id) + "'");
}

void SpaceRepository::set_state(std::string_view id, SpaceState state, std::string_view error) {
  update_one(id, "state = ?3, error = ?4",
             [&](Statement& s) { s.bind(3, to_string(state)).bind(4, error); });
}

bool SpaceRepository::transition(std::string_view id, SpaceState from, SpaceState to,
                                 std::string_view error) {
  Transaction transaction(db_);
  auto changed = db_.cached(
                        "UPDATE spaces SET state = ?, error = ?, updated_at = ? WHERE id = ? AND "
                        "state = ?")
                     ->bind_all(to_string(to), error, now(), id, to_string(from))
                     .run();
  if (changed == 0 && !get(id)) throw NotFoundError("no space with id '" + std::string(id) + "'");
  transaction.commit();
  return changed > 0;
}

void SpaceRepository::set_desired_state(std::string_view id, DesiredState desired) {
  update_one(id, "desired_state = ?3", [&](Statement& s) { s.bind(3, to_string(desired)); });
}

void SpaceRepository::set_applied_template_revision(std::string_view id, std::int64_t revision) {
  update_one(id, "applied_template_revision = ?3", [&](Statement& s) { s.bind(3, revision); });
}

void SpaceRepository::set_applied(std::string_view id, std::int64_t revision,
                                  std::string_view parts) {
  update_one(id, "applied_template_revision = ?3, applied_parts = ?4", [&](Statement& s) {
    s.bind(3, revision);
    s.bind(4, parts);
  });
}

void SpaceRepository::set_instance_id(std::string_view id, std::string_view instance_id) {
  update_one(id, "instance_id = ?3", [&](Statement& s) { s.bind(3, instance_id); });
}

void SpaceRepository::set_ip(std::string_view id, const std::optional<std::string>& ip) {
  update_one(id, "ip = ?3", [&](Statement& s) { s.bind(3, ip); });
}

void SpaceRepository::set_node(std::string_view id, std::string_view node) {
  update_one(id, "node = ?3", [&](Statement& s) { s.bind(3, node); });
}

void SpaceRepository::set_owner(std::string_view id, std::int64_t owner_id) {
  try {
    update_one(id, "owner_id = ?3", [&](Statement& s) { s.bind(3, owner_id); });
  } catch (const SqliteError& e) {
    if (violates_unique(e, "spaces.name"))
      throw ConflictError("the new owner already has a space of this one's name");
    if (violates_foreign_key(e)) throw NotFoundError("no user with id " + std::to_string(owner_id));
    throw;
  }
}

void SpaceRepository::set_suspended(std::string_view id, std::int64_t at_ms,
                                    std::string_view reason) {
  update_one(id, "suspended_at = ?3, suspend_reason = ?4", [&](Statement& s) {
    s.bind(3, at_ms);
    s.bind(4, reason);
  });
}

void SpaceRepository::set_disk_bytes(std::string_view id, std::int64_t bytes) {
  update_one(id, "disk_bytes = ?3", [&](Statement& s) { s.bind(3, bytes); });
}

void SpaceRepository::set_terminal_key(std::string_view id, std::string_view private_key,
                                       std::string_view public_line) {
  update_one(id, "terminal_key = ?3, terminal_key_public = ?4", [&](Statement& s) {
    s.bind(3, private_key);
    s.bind(4, public_line);
  });
}

std::optional<Space> SpaceRepository::claim_pool_member(std::int64_t pool_id, std::int64_t owner_id,
                                                        std::string_view name) {
  Transaction transaction(db_);
  auto pick = db_.cached(
      "SELECT id FROM spaces WHERE pool_id = ? AND owner_id IS NULL AND state IN (?, ?, ?) "
      "ORDER BY state = ? DESC, state = ? DESC, created_at, rowid LIMIT 1");
  // Booted members first, then suspended ones (a resume is seconds), then stopped ones.
  pick->bind_all(pool_id, to_string(SpaceState::Running), to_string(SpaceState::Suspended),
                 to_string(SpaceState::Stopped), to_string(SpaceState::Running),
                 to_string(SpaceState::Suspended));
  if (!pick->step()) return std::nullopt;
  auto id = pick->column_text(0);
  try {
    db_.cached(
           "UPDATE spaces SET owner_id = ?, name = ?, pool_id = NULL, updated_at = ? "
           "WHERE id = ?")
        ->bind_all(owner_id, name, now(), id)
        .run();
  } catch (const SqliteError& e) {
    if (violates_unique(e, "spaces.name"))
      throw ConflictError("this user already has a space named '" + std::string(name) + "'");
    if (violates_foreign_key(e)) throw NotFoundError("no user with id " + std::to_string(owner_id));
    throw;
  }
  auto claimed = get(id);
  transaction.commit();
  return claimed;
}

bool SpaceRepository::remove(std::string_view id) {
  auto guard = db_.lock();
  return db_.cached("DELETE FROM spaces WHERE id = ?")->bind(1, id).run() > 0;
}

}  // namespace bowline::store
