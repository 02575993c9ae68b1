#include "store/backup.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <string>
#include <thread>

#include "store/migrations.hpp"
#include "store_test_support.hpp"
#include "upgrade_fixture.hpp"

namespace bowline::store {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Suites named reliability_* carry the ctest label reliability.
class reliability_backup : public testing::StoreTest {
 protected:
  fs::path target() const { return dir_.path() / "backup.db"; }
};

TEST_F(reliability_backup, TheCopyOfARunningStoreOpensWithTheSameRecords) {
  const auto alice = make_user("alice");
  const auto dev = make_template();
  make_space("box", alice.id, dev.id);
  backup_store(file(), target());  // the store stays open, as in a running server
  make_user("after-the-backup");

  EXPECT_EQ(fs::status(target()).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  Store copy(target(), clock_);
  EXPECT_EQ(copy.db().pragma_text("integrity_check"), "ok");
  EXPECT_EQ(copy.users().get(alice.id)->username, "alice");
  EXPECT_EQ(copy.templates().get(dev.id)->name, "dev");
  EXPECT_EQ(copy.spaces().get("id-box")->owner_id, alice.id);
  EXPECT_FALSE(copy.users().find_by_username("after-the-backup"));
}

// The fixture's records of every table, written through the latest schema, all come through.
TEST_F(reliability_backup, EveryTableComesThrough) {
  {
    Db db(file());
    migrate(db, latest_schema_version() - 1);
    testing::write_records_at(db, latest_schema_version() - 1);
  }
  store();
  backup_store(file(), target());
  Store copy(target(), clock_);
  testing::expect_records_intact(copy, latest_schema_version() - 1);
}

TEST_F(reliability_backup, WritersCarryOnAndTheCopyIsConsistent) {
  make_user("first");
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 0; !stop; ++i) make_user("writer-" + std::to_string(i));
  });
  for (int round = 0; round < 5; ++round) {
    fs::remove(target());
    backup_store(file(), target());
  }
  stop = true;
  writer.join();
  Store copy(target(), clock_);
  EXPECT_EQ(copy.db().pragma_text("integrity_check"), "ok");
  EXPECT_TRUE(copy.users().find_by_username("first"));
}

TEST_F(reliability_backup, AnExistingFileIsNeverOverwritten) {
  store();
  { std::ofstream(target()) << "keep me"; }
  try {
    backup_store(file(), target());
    FAIL() << "overwrote a file";
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot create the backup"));
  }
  std::ifstream in(target());
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "keep me");
}

}  // namespace
}  // namespace bowline::store
