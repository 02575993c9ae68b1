// Upgrades from every past schema version, with data: what an existing install meets when it
// runs a newer bowline. Suites named reliability_* carry the ctest label reliability.
//
// The committed fixtures (tests/data/store/schema-NN.sqlite, one per past version) were written
// by the bowline of their time through upgrade_fixture.cpp, so they keep proving upgrades even
// if an old step were edited later. After adding schema version N+1, write the fixture of N
// (existing ones are never rewritten) and commit it:
//   cd build && BOWLINE_WRITE_STORE_FIXTURES=1 tests/unit/bowline_store_tests
//     --gtest_filter=reliability_upgrades.WriteMissingFixtures   (one command line)
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "../common/scratch_files.hpp"
#include "store/migrations.hpp"
#include "upgrade_fixture.hpp"
#include "util/clock.hpp"

namespace bowline::store {
namespace {

using test_support::TempDir;
using ::testing::HasSubstr;

// Everything a database holds, as text: its version, its schema and every row of every table.
std::string contents(const std::filesystem::path& file) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  std::string out;
  auto dump = [&](const std::string& sql) {
    sqlite3_stmt* statement = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr), SQLITE_OK) << sql;
    while (sqlite3_step(statement) == SQLITE_ROW) {
      for (int i = 0; i < sqlite3_column_count(statement); ++i) {
        auto text = sqlite3_column_text(statement, i);
        out += text ? reinterpret_cast<const char*>(text) : "NULL";
        out += '|';
      }
      out += '\n';
    }
    sqlite3_finalize(statement);
  };
  dump("PRAGMA user_version");
  dump("SELECT type, name, sql FROM sqlite_schema ORDER BY name");
  std::vector<std::string> tables;
  {
    sqlite3_stmt* statement = nullptr;
    sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name", -1,
                       &statement, nullptr);
    while (sqlite3_step(statement) == SQLITE_ROW)
      tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(statement, 0)));
    sqlite3_finalize(statement);
  }
  for (const auto& table : tables) dump("SELECT * FROM \"" + table + "\" ORDER BY rowid");
  sqlite3_close(db);
  return out;
}

void make_database_at(const std::filesystem::path& file, int version) {
  Db db(file);
  migrate(db, version);
  testing::write_records_at(db, version);
}

TEST(reliability_upgrades, EveryPastVersionWithItsRecordsReachesTheLatest) {
  for (int version = 1; version < latest_schema_version(); ++version) {
    SCOPED_TRACE("from schema version " + std::to_string(version));
    TempDir dir;
    make_database_at(dir.path() / "bowline.db", version);
    util::ManualClock clock;
    Store store(dir.path() / "bowline.db", clock);
    testing::expect_records_intact(store, version);
  }
}

TEST(reliability_upgrades, EveryCommittedFixtureReachesTheLatest) {
  for (int version = 1; version < latest_schema_version(); ++version) {
    SCOPED_TRACE("from " + testing::fixture_file(version).string());
    ASSERT_TRUE(std::filesystem::exists(testing::fixture_file(version)))
        << "no fixture of schema version " << version
        << ": write it as upgrades_test.cpp says and commit it";
    TempDir dir;
    const auto file = dir.path() / "bowline.db";
    std::filesystem::copy_file(testing::fixture_file(version), file);
    std::filesystem::permissions(file, std::filesystem::perms::owner_write,
                                 std::filesystem::perm_options::add);
    {
      Db db(file);
      ASSERT_EQ(schema_version(db), version);
    }
    util::ManualClock clock;
    Store store(file, clock);
    testing::expect_records_intact(store, version);
  }
}

// Not a check: makes the fixtures that are missing (see the top of this file).
TEST(reliability_upgrades, WriteMissingFixtures) {
  if (!std::getenv("BOWLINE_WRITE_STORE_FIXTURES"))
    GTEST_SKIP() << "set BOWLINE_WRITE_STORE_FIXTURES=1 to write missing fixtures";
  for (int version = 1; version < latest_schema_version(); ++version) {
    const auto target = testing::fixture_file(version);
    if (std::filesystem::exists(target)) continue;
    TempDir dir;
    const auto file = dir.path() / "bowline.db";
    make_database_at(file, version);
    // Small pages and no WAL: the file alone is the whole database, a few KiB in git.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode=DELETE; PRAGMA page_size=512; VACUUM;", nullptr,
                           nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
    std::filesystem::copy_file(file, target);
    std::cout << "wrote " << target << "\n";
  }
}

TEST(reliability_upgrades, ADatabaseFromANewerBowlineIsRefusedAndLeftAlone) {
  TempDir dir;
  const auto file = dir.path() / "bowline.db";
  const int newer = latest_schema_version() + 1;
  {
    util::ManualClock clock;
    Store store(file, clock);
    store.users().create({"alice", "", "", std::nullopt, "", {}, {}});
    store.db().exec("PRAGMA user_version=" + std::to_string(newer));
  }
  const auto before = contents(file);
  util::ManualClock clock;
  try {
    Store store(file, clock);
    FAIL() << "opened a database from a newer bowline";
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr(file.string()));
    EXPECT_THAT(e.what(), HasSubstr("schema version " + std::to_string(newer)));
    EXPECT_THAT(e.what(), HasSubstr("newer than this bowline understands (" +
                                    std::to_string(latest_schema_version()) + ")"));
    EXPECT_THAT(e.what(), HasSubstr("run a newer bowline"));
  }
  EXPECT_EQ(contents(file), before);
}

// A step that fails (here the disks step, v10, meeting a table of that name) undoes the whole
// upgrade, the steps before it too: the file stays as the older bowline left it, which that
// bowline still opens. Once the obstacle is gone, the upgrade goes through.
TEST(reliability_upgrades, AFailingStepLeavesTheFileAsItWas) {
  TempDir dir;
  const auto file = dir.path() / "bowline.db";
  make_database_at(file, 1);
  {
    Db db(file);
    db.exec("CREATE TABLE disks (x INTEGER) STRICT");
  }
  const auto before = contents(file);
  util::ManualClock clock;
  try {
    Store store(file, clock);
    FAIL() << "the upgrade went through a failing step";
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("schema migration 10 (disks) failed"));
    EXPECT_THAT(e.what(), HasSubstr("already exists"));
  }
  EXPECT_EQ(contents(file), before);
  {
    Db db(file);
    EXPECT_EQ(schema_version(db), 1);
    EXPECT_EQ(db.pragma_int("foreign_keys"), 1);
    db.exec("DROP TABLE disks");
  }
  Store store(file, clock);
  testing::expect_records_intact(store, 1);
}

}  // namespace
}  // namespace bowline::store
