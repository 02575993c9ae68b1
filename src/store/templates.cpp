#include "store/templates.hpp"

namespace bowline::store {

namespace {

constexpr const char* kTemplateColumns =
    "id, name, yaml, revision, created_at, updated_at, author_id";

Template read_template(const Statement& row) {
  Template out;
  out.id = row.column_int64(0);
  out.name = row.column_text(1);
  out.yaml = row.column_text(2);
  out.revision = row.column_int64(3);
  out.created_at = row.column_int64(4);
  out.updated_at = row.column_int64(5);
  out.author_id = row.column_optional_int64(6);
  return out;
}

constexpr const char* kPoolColumns = "id, name, template_id, size, created_at, updated_at";

Pool read_pool(const Statement& row) {
  Pool out;
  out.id = row.column_int64(0);
  out.name = row.column_text(1);
  out.template_id = row.column_int64(2);
  out.size = row.column_int64(3);
  out.created_at = row.column_int64(4);
  out.updated_at = row.column_int64(5);
  return out;
}

std::string plural(std::int64_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

}  // namespace

// ---- templates ----------------------------------------------------------------------------

Template TemplateRepository::create(std::string_view name, std::string_view yaml,
                                    std::optional<std::int64_t> author_id) {
  if (name.empty()) throw StoreError("a template needs a name");
  auto guard = db_.lock();
  auto when = now();
  try {
    db_.cached(
           "INSERT INTO templates (name, yaml, revision, created_at, updated_at, author_id) "
           "VALUES (?, ?, 1, ?, ?, ?)")
        ->bind_all(name, yaml, when, when, author_id)
        .run();
  } catch (const SqliteError& e) {
    if (violates_unique(e, "templates.name"))
      throw ConflictError("a template named '" + std::string(name) + "' already exists");
    throw;
  }
  return *get(db_.last_insert_rowid());
}

std::optional<Template> TemplateRepository::get(std::int64_t id) {
  auto guard = db_.lock();
  auto select =
      db_.cached(std::string("SELECT ") + kTemplateColumns + " FROM templates WHERE id = ?");
  if (!select->bind(1, id).step()) return std::nullopt;
  return read_template(*select);
}

std::optional<Template> TemplateRepository::find_by_name(std::string_view name) {
  auto guard = db_.lock();
  auto select =
      db_.cached(std::string("SELECT ") + kTemplateColumns + " FROM templates WHERE name = ?");
  if (!select->bind(1, name).step()) return std::nullopt;
  return read_template(*select);
}

std::vector<Template> TemplateRepository::list() {
  auto guard = db_.lock();
  auto select =
      db_.cached(std::string("SELECT ") + kTemplateColumns + " FROM templates ORDER BY name");
  std::vector<Template> out;
  while (select->step()) out.push_back(read_template(*select));
  return out;
}

Template TemplateRepository::update(std::int64_t id, std::string_view yaml) {
  Transaction transaction(db_);
  auto changed = db_.cached(
                        "UPDATE templates SET yaml = ?, revision = revision + 1, updated_at = ? "
                        "WHERE id = ?")
                     ->bind_all(yaml, now(), id)
                     .run();
  if (changed == 0) throw NotFoundError("no template with id " + std::to_string(id));
  auto updated = *get(id);
  transaction.commit();
  return updated;
}

void TemplateRepository::remove(std::int64_t id) {
  Transaction transaction(db_);
  auto existing = get(id);
  if (!existing) throw NotFoundError("no template with id " + std::to_string(id));
  auto users = db_.cached(
      "SELECT (SELECT count(*) FROM spaces WHERE template_id = ?1), "
      "(SELECT count(*) FROM pools WHERE template_id = ?1)");
  users->bind(1, id).step();
  auto spaces = users->column_int64(0);
  auto pools = users->column_int64(1);
  if (spaces > 0 || pools > 0) {
    std::string what;
    if (spaces > 0) what = plural(spaces, "space");
    if (pools > 0) what += (what.empty() ? "" : " and ") + plural(pools, "pool");
    throw ConflictError("template '" + existing->name + "' is used by " + what);
  }
  db_.cached("DELETE FROM templates WHERE id = ?")->bind(1, id).run();
  transaction.commit();
}

// ---- pools --------------------------------------------------------------------------------

Pool PoolRepository::create(std::string_view name, std::int64_t template_id, std::int64_t size) {
  if (name.empty()) throw StoreError("a pool needs a name");
  if (size < 0) throw StoreError("a pool's size cannot be negative");
  auto guard = db_.lock();
  auto when = now();
  try {
    db_.cached(
           "INSERT INTO pools (name, template_id, size, created_at, updated_at) "
           "VALUES (?, ?, ?, ?, ?)")
        ->bind_all(name, template_id, size, when, when)
        .run();
  } catch (const SqliteError& e) {
    if (violates_unique(e, "pools.name"))
      throw ConflictError("a pool named '" + std::string(name) + "' already exists");
    if (violates_foreign_key(e))
      throw NotFoundError("no template with id " + std::to_string(template_id));
    throw;
  }
  return *get(db_.last_insert_rowid());
}

std::optional<Pool> PoolRepository::get(std::int64_t id) {
  auto guard = db_.lock();
  auto select = db_.cached(std::string("SELECT ") + kPoolColumns + " FROM pools WHERE id = ?");
  if (!select->bind(1, id).step()) return std::nullopt;
  return read_pool(*select);
}

std::optional<Pool> PoolRepository::find_by_name(std::string_view name) {
  auto guard = db_.lock();
  auto select = db_.cached(std::string("SELECT ") + kPoolColumns + " FROM pools WHERE name = ?");
  if (!select->bind(1, name).step()) return std::nullopt;
  return read_pool(*select);
}

std::vector<Pool> PoolRepository::list() {
  auto guard = db_.lock();
  auto select = db_.cached(std::string("SELECT ") + kPoolColumns + " FROM pools ORDER BY name");
  std::vector<Pool> out;
  while (select->step()) out.push_back(read_pool(*select));
  return out;
}

void PoolRepository::set_size(std::int64_t id, std::int64_t size) {
  if (size < 0) throw StoreError("a pool's size cannot be negative");
  auto guard = db_.lock();
  if (db_.cached("UPDATE pools SET size = ?, updated_at = ? WHERE id = ?")
          ->bind_all(size, now(), id)
          .run() == 0)
    throw NotFoundError("no pool with id " + std::to_string(id));
}

void PoolRepository::remove(std::int64_t id) {
  auto guard = db_.lock();
  if (db_.cached("DELETE FROM pools WHERE id = ?")->bind(1, id).run() == 0)
    throw NotFoundError("no pool with id " + std::to_string(id));
}

}  // namespace bowline::store
