// The audit log: who did what, from where, to which space, and how it ended. The server only
// appends rows and deletes those older than the retention (prune); a trigger refuses any
// change to a written row.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/repository.hpp"

namespace bowline::store {

struct AuditEntry {
  std::int64_t id = 0;
  std::int64_t time = 0;  // unix ms
  std::optional<std::int64_t> user_id;
  std::string username;  // as it was then: users may go, the log stays
  std::string peer;      // the client's address
  std::string action;    // "POST /api/v1/spaces/{id}/start", "socket console", ...
  std::optional<std::string> space_id;
  int status = 0;  // the HTTP status answered
};

struct AuditFilter {
  std::optional<std::string> username;
  std::optional<std::string> space_id;
  std::optional<std::int64_t> since;  // unix ms, inclusive
  std::size_t limit = 1000;           // the newest this many, oldest first
};

class AuditRepository : public Repository {
 public:
  using Repository::Repository;

  // Writes `entry` (its id and, when 0, its time are the store's); returns it as stored.
  AuditEntry append(AuditEntry entry);
  std::vector<AuditEntry> list(const AuditFilter& filter);
  // Deletes the entries older than `before` (unix ms); returns how many.
  int prune(std::int64_t before);
};

}  // namespace bowline::store
