#include "store/sessions.hpp"

#include <gtest/gtest.h>

#include "store_test_support.hpp"

namespace bowline::store {
namespace {

class SessionTest : public testing::StoreTest {
 protected:
  std::int64_t user() {
    NewUser u;
    u.username = "alice";
    return store().users().create(u).id;
  }
  static constexpr std::int64_t kIdle = 12 * 3600 * 1000;
};

TEST_F(SessionTest, FoundByItsHashUntilIdleTooLong) {
  const auto id = user();
  const auto made =
      store().sessions().create(id, "hash1", "csrf1", clock_.now_unix_ms() + 7 * 86400 * 1000);
  EXPECT_EQ(made.user_id, id);
  auto found = store().sessions().use("hash1", kIdle);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->csrf, "csrf1");
  EXPECT_FALSE(store().sessions().use("other", kIdle));

  clock_.advance(kIdle - 1000);
  ASSERT_TRUE(store().sessions().use("hash1", kIdle));  // and that use moves last_seen
  clock_.advance(kIdle - 1000);
  ASSERT_TRUE(store().sessions().use("hash1", kIdle));
  clock_.advance(kIdle);
  EXPECT_FALSE(store().sessions().use("hash1", kIdle));
  clock_.advance(-kIdle);  // deleted, not just refused
  EXPECT_FALSE(store().sessions().use("hash1", kIdle));
}

TEST_F(SessionTest, EndsAtTheAbsoluteExpiryHoweverBusy) {
  const auto id = user();
  store().sessions().create(id, "hash1", "c", clock_.now_unix_ms() + 3 * 3600 * 1000);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(store().sessions().use("hash1", kIdle)) << i;
    clock_.advance(3600 * 1000 / 2);
  }
  clock_.advance(3600 * 1000);
  EXPECT_FALSE(store().sessions().use("hash1", kIdle));
}

TEST_F(SessionTest, LogoutAndUserRemovalEndSessions) {
  const auto id = user();
  const auto far = clock_.now_unix_ms() + 86400 * 1000;
  store().sessions().create(id, "a", "c", far);
  store().sessions().create(id, "b", "c", far);
  EXPECT_TRUE(store().sessions().remove_by_hash("a"));
  EXPECT_FALSE(store().sessions().remove_by_hash("a"));
  EXPECT_FALSE(store().sessions().use("a", kIdle));
  EXPECT_TRUE(store().sessions().use("b", kIdle));
  store().users().remove(id);
  EXPECT_FALSE(store().sessions().use("b", kIdle));
  EXPECT_THROW(store().sessions().create(id, "z", "c", far), NotFoundError);
}

TEST_F(SessionTest, RemoveExpiredSweepsBothLimits) {
  const auto id = user();
  const auto now = clock_.now_unix_ms();
  store().sessions().create(id, "short", "c", now + 1000);
  store().sessions().create(id, "long", "c", now + 30LL * 86400 * 1000);
  clock_.advance(2000);
  EXPECT_EQ(store().sessions().remove_expired(kIdle), 1);
  clock_.advance(kIdle);
  EXPECT_EQ(store().sessions().remove_expired(kIdle), 1);
}

}  // namespace
}  // namespace bowline::store
