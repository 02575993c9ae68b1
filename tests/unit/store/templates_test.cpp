#include "store/templates.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store_test_support.hpp"

namespace bowline::store {
namespace {

class TemplateTest : public testing::StoreTest {};

TEST_F(TemplateTest, RoundTripsAndStartsAtRevisionOne) {
  const std::string yaml = "name: dev\nimage: debian-12\nresources:\n  memory: 2Gi\n";
  auto created = store().templates().create("dev", yaml);
  close();
  auto read = store().templates().get(created.id);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->name, "dev");
  EXPECT_EQ(read->yaml, yaml);
  EXPECT_EQ(read->revision, 1);
  EXPECT_EQ(read->created_at, clock_.now_unix_ms());
  EXPECT_EQ(read->updated_at, read->created_at);
  EXPECT_EQ(store().templates().find_by_name("dev")->id, created.id);
  EXPECT_EQ(store().templates().find_by_name("prod"), std::nullopt);
}

TEST_F(TemplateTest, UpdateBumpsTheRevisionEveryTime) {
  auto created = make_template("dev");
  clock_.advance(10);
  auto second = store().templates().update(created.id, "name: dev\n# 2\n");
  EXPECT_EQ(second.revision, 2);
  EXPECT_EQ(second.updated_at, created.created_at + 10);
  EXPECT_EQ(second.created_at, created.created_at);
  EXPECT_EQ(store().templates().update(created.id, "name: dev\n# 3\n").revision, 3);
  EXPECT_EQ(store().templates().get(created.id)->yaml, "name: dev\n# 3\n");
  EXPECT_THROW(store().templates().update(999, "x"), NotFoundError);
}

TEST_F(TemplateTest, DuplicateNameIsAClearConflict) {
  make_template("dev");
  try {
    make_template("dev");
    FAIL() << "two templates named dev";
  } catch (const ConflictError& e) {
    EXPECT_STREQ(e.what(), "a template named 'dev' already exists");
  }
}

TEST_F(TemplateTest, ListsByName) {
  make_template("web");
  make_template("db");
  auto all = store().templates().list();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "db");
  EXPECT_EQ(all[1].name, "web");
}

TEST_F(TemplateTest, RemovingATemplateInUseSaysWhatUsesIt) {
  auto tmpl = make_template("dev");
  auto user = make_user("alice");
  make_space("a", user.id, tmpl.id);
  make_space("b", user.id, tmpl.id);
  auto pool = store().pools().create("ready", tmpl.id, 1);
  try {
    store().templates().remove(tmpl.id);
    FAIL() << "removed a template in use";
  } catch (const ConflictError& e) {
    EXPECT_STREQ(e.what(), "template 'dev' is used by 2 spaces and 1 pool");
  }
  store().spaces().remove("id-a");
  store().spaces().remove("id-b");
  store().pools().remove(pool.id);
  store().templates().remove(tmpl.id);
  EXPECT_EQ(store().templates().get(tmpl.id), std::nullopt);
  EXPECT_THROW(store().templates().remove(tmpl.id), NotFoundError);
}

TEST_F(TemplateTest, PoolsRoundTrip) {
  auto tmpl = make_template("nat");
  auto pool = store().pools().create("ready", tmpl.id, 2);
  close();
  auto read = store().pools().get(pool.id);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->name, "ready");
  EXPECT_EQ(read->template_id, tmpl.id);
  EXPECT_EQ(read->size, 2);
  EXPECT_EQ(read->created_at, clock_.now_unix_ms());

  clock_.advance(7);
  store().pools().set_size(pool.id, 5);
  read = store().pools().find_by_name("ready");
  EXPECT_EQ(read->size, 5);
  EXPECT_EQ(read->updated_at, clock_.now_unix_ms());
  EXPECT_EQ(store().pools().list().size(), 1u);
  EXPECT_THROW(store().pools().set_size(pool.id, -1), StoreError);
  EXPECT_THROW(store().pools().set_size(999, 1), NotFoundError);
}

TEST_F(TemplateTest, PoolErrorsAreClear) {
  auto tmpl = make_template("nat");
  store().pools().create("ready", tmpl.id, 2);
  try {
    store().pools().create("ready", tmpl.id, 1);
    FAIL() << "two pools named ready";
  } catch (const ConflictError& e) {
    EXPECT_STREQ(e.what(), "a pool named 'ready' already exists");
  }
  try {
    store().pools().create("other", 999, 1);
    FAIL() << "pool of a missing template";
  } catch (const NotFoundError& e) {
    EXPECT_STREQ(e.what(), "no template with id 999");
  }
}

TEST_F(TemplateTest, RemovingAPoolLeavesItsMembersAsPlainSpaces) {
  auto tmpl = make_template("nat");
  auto pool = store().pools().create("ready", tmpl.id, 1);
  make_space("member", std::nullopt, tmpl.id, pool.id);
  store().pools().remove(pool.id);
  auto member = store().spaces().get("id-member");
  ASSERT_TRUE(member);
  EXPECT_EQ(member->pool_id, std::nullopt);
}

}  // namespace
}  // namespace bowline::store
