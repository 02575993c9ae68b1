// Schema migrations, keyed on PRAGMA user_version. Version N is reached by applying step N to
// a database at version N-1. All the steps of one migrate() run in a single IMMEDIATE
// transaction with their version bumps, so a crash or a failing step leaves the database as
// it was before the upgrade (which the older bowline still opens), never between versions.
// Steps are append-only: once released, a step never changes; fix mistakes with a new step.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "store/sqlite.hpp"

namespace bowline::store {

struct Migration {
  int version;            // the user_version this step leads to (1, 2, ...)
  std::string_view name;  // what it does, for logs and errors
  void (*apply)(Db&);     // runs inside the upgrade's transaction
};

const std::vector<Migration>& migrations();
int latest_schema_version();

// PRAGMA user_version: 0 for an empty database.
int schema_version(Db& db);

// Brings the database up to `target` (default: the latest), step by step. Foreign keys are off
// while steps run (so a step may rebuild a table) and checked with foreign_key_check before
// each step. Safe when several connections start at once: each step re-reads the version
// inside the transaction. Throws StoreError when the database is newer than this
// program, naming both versions.
void migrate(Db& db, std::optional<int> target = std::nullopt);

}  // namespace bowline::store
