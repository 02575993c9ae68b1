// Shares of spaces and the audit log, in a real SQLite store.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store/errors.hpp"
#include "store_test_support.hpp"

namespace bowline::store {
namespace {

using ::testing::HasSubstr;

class SharesAuditTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    alice_ = make_user("alice").id;
    bob_ = make_user("bob").id;
    space_ = make_space("box", alice_, make_template().id).id;
  }
  std::int64_t alice_ = 0, bob_ = 0;
  std::string space_;
};

TEST_F(SharesAuditTest, ASharesRoleIsSetChangedAndRemoved) {
  EXPECT_FALSE(store().shares().role_of(space_, bob_));
  store().shares().put(space_, bob_, ShareRole::Viewer);
  EXPECT_EQ(store().shares().role_of(space_, bob_), ShareRole::Viewer);
  store().shares().put(space_, bob_, ShareRole::Admin);
  EXPECT_EQ(store().shares().role_of(space_, bob_), ShareRole::Admin);
  ASSERT_EQ(store().shares().of_space(space_).size(), 1u);
  EXPECT_EQ(store().shares().of_space(space_)[0].username, "bob");
  EXPECT_EQ(store().shares().of_user(bob_).size(), 1u);
  EXPECT_TRUE(store().shares().remove(space_, bob_));
  EXPECT_FALSE(store().shares().remove(space_, bob_));
  EXPECT_FALSE(store().shares().role_of(space_, bob_));
}

TEST_F(SharesAuditTest, ASharesGoesWithItsSpace) {
  store().shares().put(space_, bob_, ShareRole::User);
  store().spaces().remove(space_);
  EXPECT_TRUE(store().shares().of_user(bob_).empty());
  EXPECT_THROW(store().shares().put("no-such-space", bob_, ShareRole::User), NotFoundError);
}

TEST_F(SharesAuditTest, TheAuditLogIsFilteredPrunedAndNeverRewritten) {
  clock_.set(1000);
  store().audit().append(
      {0, 0, alice_, "alice", "198.51.100.1", "POST /api/v1/spaces", space_, 202});
  clock_.set(5000);
  store().audit().append({0, 0, bob_, "bob", "198.51.100.2", "socket console", space_, 101});
  EXPECT_EQ(store().audit().list({}).size(), 2u);
  AuditFilter by_bob, since, other_space;
  by_bob.username = "bob";
  since.since = 2000;
  other_space.space_id = "other";
  EXPECT_EQ(store().audit().list(by_bob).at(0).action, "socket console");
  EXPECT_EQ(store().audit().list(since).size(), 1u);
  EXPECT_EQ(store().audit().list(other_space).size(), 0u);
  try {
    store().db().exec("UPDATE audit_log SET status = 200");
    FAIL() << "an audit row was changed";
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("append-only"));
  }
  EXPECT_EQ(store().audit().prune(2000), 1);
  ASSERT_EQ(store().audit().list({}).size(), 1u);
  EXPECT_EQ(store().audit().list({})[0].username, "bob");
}

}  // namespace
}  // namespace bowline::store
