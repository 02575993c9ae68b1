// What every repository shares: the connection, the clock, and turning SQLite's constraint
// failures into errors a user can act on.
#pragma once

#include <cstdint>
#include <string>

#include "store/errors.hpp"
#include "store/sqlite.hpp"
#include "util/clock.hpp"

namespace bowline::store {

class Repository {
 public:
  Repository(Db& db, const util::Clock& clock) : db_(db), clock_(clock) {}

 protected:
  std::int64_t now() const { return clock_.now_unix_ms(); }

  Db& db_;
  const util::Clock& clock_;
};

// "UNIQUE constraint failed: spaces.owner_id, spaces.name" -> true for "spaces.name".
bool violates_unique(const SqliteError& error, std::string_view table_column);
bool violates_foreign_key(const SqliteError& error);

}  // namespace bowline::store
