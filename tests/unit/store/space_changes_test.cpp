// The space_changes journal that the API's list cache reads: triggers record every space that
// was made, changed or deleted, and the spaces whose owner's name or template's name or
// revision changed, each with a sequence number above every earlier one.
#include <gtest/gtest.h>

#include <map>

#include "store_test_support.hpp"

namespace bowline::store {
namespace {

class SpaceChangesTest : public testing::StoreTest {
 protected:
  std::int64_t newest() {
    auto select = store().db().prepare("SELECT coalesce(max(seq), 0) FROM space_changes");
    EXPECT_TRUE(select.step());
    return select.column_int64(0);
  }
  // Space id (or "gone") by journal sequence number, for the changes after `after`.
  std::map<std::int64_t, std::string> since(std::int64_t after) {
    std::map<std::int64_t, std::string> out;
    auto select = store().db().prepare(
        "SELECT c.seq, coalesce(s.id, 'gone') FROM space_changes c "
        "LEFT JOIN spaces s ON s.rowid = c.space_rowid WHERE c.seq > ?");
    select.bind(1, after);
    while (select.step()) out[select.column_int64(0)] += select.column_text(1) + " ";
    return out;
  }
};

TEST_F(SpaceChangesTest, EveryWriteToASpaceMovesItToTheEnd) {
  const auto alice = make_user("alice");
  const auto dev = make_template();
  const auto start = newest();
  make_space("a", alice.id, dev.id);
  make_space("b", alice.id, dev.id);
  EXPECT_EQ(since(start),
            (std::map<std::int64_t, std::string>{{start + 1, "id-a "}, {start + 2, "id-b "}}));
  auto mark = newest();
  store().spaces().set_state("id-a", SpaceState::Error, "boom");
  EXPECT_EQ(since(mark), (std::map<std::int64_t, std::string>{{mark + 1, "id-a "}}));
  mark = newest();
  store().spaces().set_ip("id-b", "198.51.100.7");
  store().spaces().remove("id-a");
  EXPECT_EQ(since(mark),
            (std::map<std::int64_t, std::string>{{mark + 1, "id-b "}, {mark + 2, "gone "}}));
  EXPECT_EQ(since(mark + 2), (std::map<std::int64_t, std::string>{}));
}

TEST_F(SpaceChangesTest, RenamingTheOwnerOrChangingTheTemplateTouchesTheirSpacesOnly) {
  auto alice = make_user("alice");
  const auto bob = make_user("bob");
  const auto dev = make_template("dev");
  const auto other = make_template("other");
  make_space("a1", alice.id, dev.id);
  make_space("a2", alice.id, other.id);
  make_space("b1", bob.id, dev.id);
  auto mark = newest();
  alice.email = "alice@example.org";  // not shown in the list: no change recorded
  store().users().update(alice);
  EXPECT_EQ(newest(), mark);
  alice.username = "alicia";
  store().users().update(alice);
  auto changed = since(mark);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed.begin()->second, "id-a1 id-a2 ");

  mark = newest();
  store().templates().update(dev.id, "name: dev\nmemory: 1G\n");  // a new revision
  changed = since(mark);
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed.begin()->second, "id-a1 id-b1 ");
}

// A foreign key's action (ON DELETE SET NULL) updates the members of a deleted pool: that
// statement's conflict clause must not turn the journal's upsert into an error.
TEST_F(SpaceChangesTest, DeletingAPoolRecordsItsMembers) {
  const auto dev = make_template();
  const auto pool = store().pools().create("ready", dev.id, 2);
  make_space("m1", std::nullopt, dev.id, pool.id);
  make_space("m2", std::nullopt, dev.id, pool.id);
  make_space("other", std::nullopt, dev.id);
  const auto mark = newest();
  store().pools().remove(pool.id);
  std::string changed;
  for (const auto& [seq, ids] : since(mark)) changed += ids;
  EXPECT_EQ(changed, "id-m1 id-m2 ");
}

}  // namespace
}  // namespace bowline::store
