#include "store/sqlite.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <limits>
#include <stdexcept>
#include <thread>

#include "store_test_support.hpp"

namespace bowline::store {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

class SqliteTest : public ::testing::Test {
 protected:
  std::filesystem::path file() const { return dir_.path() / "test.db"; }
  TempDir dir_;
};

TEST_F(SqliteTest, OpensInWalModeWithForeignKeysNormalSyncAndBusyTimeout) {
  Db db(file(), Db::Options{std::chrono::milliseconds(1234)});
  EXPECT_EQ(db.pragma_text("journal_mode"), "wal");
  EXPECT_EQ(db.pragma_int("foreign_keys"), 1);
  EXPECT_EQ(db.pragma_int("synchronous"), 1);  // NORMAL
  EXPECT_EQ(db.pragma_int("busy_timeout"), 1234);
  db.exec("CREATE TABLE t (x INTEGER)");
  EXPECT_TRUE(std::filesystem::exists(file().string() + "-wal"));
}

// The files hold password and token hashes: the server's user alone reads them, even when the
// umask was loose or an existing file had been left readable by others.
using security_files = SqliteTest;

TEST_F(security_files, TheDatabaseAndItsWalAreTheOwnersAlone) {
  namespace fs = std::filesystem;
  const auto old_umask = ::umask(0);
  {
    Db db(file());
    db.exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)");
    for (const auto* suffix : {"", "-wal", "-shm"})
      EXPECT_EQ(fs::status(file().string() + suffix).permissions() & fs::perms::all,
                fs::perms::owner_read | fs::perms::owner_write)
          << suffix;
  }
  for (const auto* suffix : {"", "-wal", "-shm"})
    if (fs::exists(file().string() + suffix))
      fs::permissions(file().string() + suffix, fs::perms::all, fs::perm_options::replace);
  Db again(file());
  ::umask(old_umask);
  for (const auto* suffix : {"", "-wal", "-shm"}) {
    if (!fs::exists(file().string() + suffix)) continue;
    EXPECT_EQ(fs::status(file().string() + suffix).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write)
        << suffix;
  }
}

TEST_F(SqliteTest, BindsAndReadsEveryType) {
  Db db(file());
  db.exec("CREATE TABLE t (i INTEGER, d REAL, s TEXT, n TEXT, o INTEGER, b INTEGER)");
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  const std::string text("quote ' and\nnewline and \xc3\xa9", 24);
  std::optional<std::int64_t> absent;
  db.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)")
      .bind_all(big, 2.5, text, std::nullopt, absent, true)
      .run();

  auto select = db.prepare("SELECT i, d, s, n, o, b FROM t");
  ASSERT_TRUE(select.step());
  EXPECT_EQ(select.column_int64(0), big);
  EXPECT_DOUBLE_EQ(select.column_double(1), 2.5);
  EXPECT_EQ(select.column_text(2), text);
  EXPECT_TRUE(select.is_null(3));
  EXPECT_EQ(select.column_optional_text(3), std::nullopt);
  EXPECT_EQ(select.column_optional_int64(4), std::nullopt);
  EXPECT_TRUE(select.column_bool(5));
  EXPECT_FALSE(select.step());
}

TEST_F(SqliteTest, EmptyStringViewIsAnEmptyStringNotNull) {
  Db db(file());
  auto select = db.prepare("SELECT ? IS NULL, ?");
  select.bind(1, std::string_view{}).bind(2, std::string_view{});
  ASSERT_TRUE(select.step());
  EXPECT_FALSE(select.column_bool(0));
  EXPECT_EQ(select.column_optional_text(1), "");
}

TEST_F(SqliteTest, CachedStatementsAreReusedWithFreshBindings) {
  Db db(file());
  db.exec("CREATE TABLE t (x INTEGER)");
  for (int i = 0; i < 3; ++i) db.cached("INSERT INTO t VALUES (?)")->bind(1, i).run();
  const Statement* first = nullptr;
  for (int i = 0; i < 3; ++i) {
    auto select = db.cached("SELECT count(*) FROM t WHERE x >= ?");
    if (first == nullptr) first = &*select;
    EXPECT_EQ(&*select, first) << "the prepared statement is reused, not prepared again";
    ASSERT_TRUE(select->bind(1, i).step());
    EXPECT_EQ(select->column_int64(0), 3 - i);
  }
}

TEST_F(SqliteTest, SameCachedSqlCanBeUsedWhileItIsStillBeingStepped) {
  Db db(file());
  db.exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2)");
  auto outer = db.cached("SELECT x FROM t ORDER BY x");
  ASSERT_TRUE(outer->step());
  auto inner = db.cached("SELECT x FROM t ORDER BY x");
  ASSERT_TRUE(inner->step());
  EXPECT_EQ(inner->column_int64(0), 1);
  ASSERT_TRUE(outer->step());
  EXPECT_EQ(outer->column_int64(0), 2);
}

TEST_F(SqliteTest, ErrorsNameTheStepTheSqlAndSqlitesMessage) {
  Db db(file());
  try {
    db.prepare("SELEC 1");
    FAIL() << "bad SQL compiled";
  } catch (const SqliteError& e) {
    EXPECT_EQ(e.step(), "prepare");
    EXPECT_EQ(e.code(), SQLITE_ERROR);
    EXPECT_THAT(e.what(), HasSubstr("syntax error"));
    EXPECT_THAT(e.what(), HasSubstr("SELEC 1"));
  }

  db.exec("CREATE TABLE t (x INTEGER UNIQUE)");
  db.exec("INSERT INTO t VALUES (1)");
  try {
    db.prepare("INSERT INTO t VALUES (?)").bind(1, 1).run();
    FAIL() << "duplicate accepted";
  } catch (const SqliteError& e) {
    EXPECT_EQ(e.step(), "step");
    EXPECT_TRUE(e.is_unique_violation());
    EXPECT_THAT(e.what(), HasSubstr("UNIQUE constraint failed: t.x"));
  }
}

TEST_F(SqliteTest, OpeningAnUnreachableFileSaysWhichFile) {
  try {
    Db db(dir_.path() / "missing-dir" / "x.db");
    FAIL() << "opened a file in a missing directory";
  } catch (const SqliteError& e) {
    EXPECT_THAT(e.what(), HasSubstr("missing-dir"));
  }
}

TEST_F(SqliteTest, TransactionRollsBackWhenItIsNotCommitted) {
  Db db(file());
  db.exec("CREATE TABLE t (x INTEGER)");
  EXPECT_THROW(
      {
        Transaction transaction(db);
        db.exec("INSERT INTO t VALUES (1)");
        throw std::runtime_error("a later step failed");
      },
      std::runtime_error);
  EXPECT_FALSE(db.in_transaction());
  EXPECT_EQ(db.pragma_int("user_version"), 0);
  auto count = [&] {
    auto select = db.prepare("SELECT count(*) FROM t");
    select.step();
    return select.column_int64(0);
  };
  EXPECT_EQ(count(), 0);

  {
    Transaction transaction(db);
    db.exec("INSERT INTO t VALUES (1)");
    transaction.commit();
  }
  EXPECT_EQ(count(), 1);
}

TEST_F(SqliteTest, NestedTransactionIsASavepointThatRollsBackAlone) {
  Db db(file());
  db.exec("CREATE TABLE t (x INTEGER)");
  {
    Transaction outer(db);
    db.exec("INSERT INTO t VALUES (1)");
    {
      Transaction inner(db);
      db.exec("INSERT INTO t VALUES (2)");
    }  // not committed: only 2 goes
    {
      Transaction inner(db);
      db.exec("INSERT INTO t VALUES (3)");
      inner.commit();
    }
    outer.commit();
  }
  auto select = db.prepare("SELECT group_concat(x) FROM (SELECT x FROM t ORDER BY x)");
  select.step();
  EXPECT_EQ(select.column_text(0), "1,3");
}

TEST_F(SqliteTest, ImmediateTransactionMakesAnotherConnectionWaitThenGiveUpWithBusy) {
  Db first(file());
  first.exec("CREATE TABLE t (x INTEGER)");
  Db second(file(), Db::Options{std::chrono::milliseconds(50)});
  Transaction holding(first);
  try {
    Transaction blocked(second);
    FAIL() << "two writers at once";
  } catch (const SqliteError& e) {
    EXPECT_EQ(e.code(), SQLITE_BUSY);
    EXPECT_THAT(e.what(), HasSubstr("BEGIN IMMEDIATE"));
  }
  // WAL: the reader is not blocked by the writer.
  auto select = second.prepare("SELECT count(*) FROM t");
  ASSERT_TRUE(select.step());
}

TEST_F(SqliteTest, TransactionKeepsOtherThreadsOutUntilItEnds) {
  Db db(file());
  db.exec("CREATE TABLE t (x INTEGER)");
  std::int64_t seen = -1;
  std::thread reader;
  {
    Transaction transaction(db);
    db.exec("INSERT INTO t VALUES (1)");
    reader = std::thread([&] {
      auto guard = db.lock();
      auto select = db.prepare("SELECT count(*) FROM t");
      select.step();
      seen = select.column_int64(0);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    db.exec("INSERT INTO t VALUES (2)");
    transaction.commit();
  }
  reader.join();
  EXPECT_EQ(seen, 2) << "the reader ran only after the commit, and saw all of it";
}

}  // namespace
}  // namespace bowline::store
