// Store::reader(): the second, read-only connection that long reads (the spaces list) use.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>

#include "store_test_support.hpp"

namespace bowline::store {
namespace {

using ::testing::HasSubstr;

class ReaderTest : public testing::StoreTest {
 protected:
  std::int64_t count_on_reader() {
    auto& reader = store().reader();
    auto guard = reader.lock();
    auto select = reader.cached("SELECT count(*) FROM spaces");
    EXPECT_TRUE(select->step());
    return select->column_int64(0);
  }
};

TEST_F(ReaderTest, SeesWhatIsCommitted) {
  const auto owner = make_user("alice").id;
  const auto tmpl = make_template().id;
  EXPECT_EQ(count_on_reader(), 0);
  make_space("one", owner, tmpl);
  make_space("two", owner, tmpl);
  EXPECT_EQ(count_on_reader(), 2);
}

TEST_F(ReaderTest, NeitherWaitsForAnOpenWriteNorSeesIt) {
  const auto owner = make_user("alice").id;
  const auto tmpl = make_template().id;
  make_space("one", owner, tmpl);
  auto transaction = store().transaction();  // holds db()'s lock on this thread
  make_space("two", owner, tmpl);
  // Another thread: with a shared connection it would block on the writer's lock until the
  // commit; the reader answers at once, from the last commit.
  auto count = std::async(std::launch::async, [&] { return count_on_reader(); });
  ASSERT_EQ(count.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(count.get(), 1);
  transaction.commit();
  EXPECT_EQ(count_on_reader(), 2);
}

TEST_F(ReaderTest, RefusesWrites) {
  store();
  try {
    store().reader().exec("DELETE FROM spaces");
    FAIL() << "a write on the reader succeeded";
  } catch (const SqliteError& e) {
    EXPECT_THAT(e.what(), HasSubstr("readonly"));
  }
}

}  // namespace
}  // namespace bowline::store
