#include "store/spaces.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "store_test_support.hpp"

namespace bowline::store {
namespace {

using ::testing::HasSubstr;

class SpaceTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    alice_ = make_user("alice").id;
    bob_ = make_user("bob").id;
    template_ = make_template().id;
  }
  std::int64_t alice_ = 0, bob_ = 0, template_ = 0;
};

TEST_F(SpaceTest, RoundTripsEveryField) {
  NewSpace space;
  space.id = "6f1c2a9e-0000-4000-8000-000000000001";
  space.name = "dev";
  space.owner_id = alice_;
  space.template_id = template_;
  space.desired_state = DesiredState::Running;
  space.state = SpaceState::Creating;
  space.uuid = "0b5f0c1e-1111-4111-8111-111111111111";
  space.vnc_password = "Vnc12345";
  space.domain_name = "bowline-alice-dev";
  space.node = "node-a";
  auto created = store().spaces().create(space);
  EXPECT_EQ(created.created_at, clock_.now_unix_ms());

  close();
  auto read = store().spaces().get(space.id);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->id, space.id);
  EXPECT_EQ(read->name, "dev");
  EXPECT_EQ(read->owner_id, alice_);
  EXPECT_EQ(read->template_id, template_);
  EXPECT_EQ(read->applied_template_revision, 0);
  EXPECT_EQ(read->desired_state, DesiredState::Running);
  EXPECT_EQ(read->state, SpaceState::Creating);
  EXPECT_EQ(read->error, "");
  EXPECT_EQ(read->ip, std::nullopt);
  EXPECT_EQ(read->uuid, space.uuid);
  EXPECT_EQ(read->vnc_password, "Vnc12345");
  EXPECT_EQ(read->domain_name, "bowline-alice-dev");
  EXPECT_EQ(read->node, "node-a");
  EXPECT_EQ(read->pool_id, std::nullopt);

  EXPECT_EQ(store().spaces().find_by_domain_name("bowline-alice-dev")->id, space.id);
  EXPECT_EQ(store().spaces().find_by_name(alice_, "dev")->id, space.id);
  EXPECT_EQ(store().spaces().find_by_name(bob_, "dev"), std::nullopt);
  EXPECT_EQ(store().spaces().get("nope"), std::nullopt);
}

TEST_F(SpaceTest, StateNamesRoundTrip) {
  for (auto state :
       {SpaceState::Pending, SpaceState::Creating, SpaceState::Running, SpaceState::Stopping,
        SpaceState::Stopped, SpaceState::Starting, SpaceState::Deleting, SpaceState::Error})
    EXPECT_EQ(parse_space_state(to_string(state)), state);
  EXPECT_EQ(parse_space_state("paused"), std::nullopt);
}

TEST_F(SpaceTest, NamesAreUniquePerOwnerAndDomainNamesEverywhere) {
  make_space("dev", alice_, template_);
  // Another owner may use the same space name (with its own domain name).
  NewSpace bobs;
  bobs.id = "bob-dev";
  bobs.name = "dev";
  bobs.owner_id = bob_;
  bobs.template_id = template_;
  bobs.uuid = "u";
  bobs.domain_name = "bowline-bob-dev";
  EXPECT_NO_THROW(store().spaces().create(bobs));

  NewSpace again = bobs;
  again.id = "alice-dev-2";
  again.owner_id = alice_;
  again.domain_name = "bowline-alice-dev-2";
  try {
    store().spaces().create(again);
    FAIL() << "alice has two spaces named dev";
  } catch (const ConflictError& e) {
    EXPECT_STREQ(e.what(), "this user already has a space named 'dev'");
  }

  again.name = "other";
  again.domain_name = "bowline-bob-dev";
  try {
    store().spaces().create(again);
    FAIL() << "two spaces share a domain name";
  } catch (const ConflictError& e) {
    EXPECT_STREQ(e.what(), "the domain name 'bowline-bob-dev' is already in use");
  }

  again.id = "bob-dev";
  again.domain_name = "bowline-fresh";
  EXPECT_THROW(store().spaces().create(again), ConflictError) << "same id";
  EXPECT_EQ(store().spaces().count(), 2);
}

TEST_F(SpaceTest, UnknownOwnerOrTemplateIsNotFound) {
  try {
    make_space("x", 999, template_);
    FAIL() << "space of a missing user";
  } catch (const NotFoundError& e) {
    EXPECT_THAT(e.what(), HasSubstr("does not exist"));
  }
  EXPECT_THROW(make_space("y", alice_, 999), NotFoundError);
}

TEST_F(SpaceTest, SettersChangeOneThingAndStampTheTime) {
  auto space = make_space("dev", alice_, template_);
  clock_.advance(100);
  auto& spaces = store().spaces();
  spaces.set_state(space.id, SpaceState::Error, "image 'nope' not found");
  auto read = *spaces.get(space.id);
  EXPECT_EQ(read.state, SpaceState::Error);
  EXPECT_EQ(read.error, "image 'nope' not found");
  EXPECT_EQ(read.updated_at, space.created_at + 100);

  spaces.set_state(space.id, SpaceState::Stopped);
  spaces.set_desired_state(space.id, DesiredState::Stopped);
  spaces.set_applied_template_revision(space.id, 3);
  spaces.set_ip(space.id, "198.51.100.20");
  spaces.set_node(space.id, "node-b");
  read = *spaces.get(space.id);
  EXPECT_EQ(read.state, SpaceState::Stopped);
  EXPECT_EQ(read.error, "") << "a new state clears the old error";
  EXPECT_EQ(read.desired_state, DesiredState::Stopped);
  EXPECT_EQ(read.applied_template_revision, 3);
  EXPECT_EQ(read.ip, "198.51.100.20");
  EXPECT_EQ(read.node, "node-b");
  spaces.set_ip(space.id, std::nullopt);
  EXPECT_EQ(spaces.get(space.id)->ip, std::nullopt);

  EXPECT_THROW(spaces.set_state("nope", SpaceState::Running), NotFoundError);
  EXPECT_THROW(spaces.set_node("nope", "n"), NotFoundError);
}

TEST_F(SpaceTest, TransitionIsACompareAndSet) {
  auto space = make_space("dev", alice_, template_);  // pending
  EXPECT_TRUE(store().spaces().transition(space.id, SpaceState::Pending, SpaceState::Creating));
  EXPECT_FALSE(store().spaces().transition(space.id, SpaceState::Pending, SpaceState::Running));
  EXPECT_EQ(store().spaces().get(space.id)->state, SpaceState::Creating);
  EXPECT_THROW(store().spaces().transition("nope", SpaceState::Pending, SpaceState::Creating),
               NotFoundError);
}

TEST_F(SpaceTest, ListsByOwnerPoolAndTemplateInCreationOrder) {
  auto pool = store().pools().create("ready", template_, 2);
  make_space("a", alice_, template_);
  clock_.advance(1);
  make_space("b", bob_, template_);
  clock_.advance(1);
  make_space("c", alice_, template_);
  make_space("m", std::nullopt, template_, pool.id);
  auto names = [](const std::vector<Space>& spaces) {
    std::vector<std::string> out;
    for (const auto& space : spaces) out.push_back(space.name);
    return out;
  };
  EXPECT_EQ(names(store().spaces().list()), (std::vector<std::string>{"a", "b", "c", "m"}));
  EXPECT_EQ(names(store().spaces().list_for_owner(alice_)), (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(names(store().spaces().list_for_pool(pool.id)), (std::vector<std::string>{"m"}));
  EXPECT_EQ(store().spaces().list_for_template(template_).size(), 4u);
}

TEST_F(SpaceTest, ClaimHandsOutRunningMembersFirstAndNeverTheSameOneTwice) {
  auto pool = store().pools().create("ready", template_, 3);
  make_space("m1", std::nullopt, template_, pool.id);  // pending: not claimable
  make_space("m2", std::nullopt, template_, pool.id);
  make_space("m3", std::nullopt, template_, pool.id);
  store().spaces().set_state("id-m2", SpaceState::Stopped);
  store().spaces().set_state("id-m3", SpaceState::Running);

  auto first = store().spaces().claim_pool_member(pool.id, alice_, "mine");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->id, "id-m3") << "running first";
  EXPECT_EQ(first->owner_id, alice_);
  EXPECT_EQ(first->name, "mine");
  EXPECT_EQ(first->pool_id, std::nullopt);

  EXPECT_THROW(store().spaces().claim_pool_member(pool.id, alice_, "mine"), ConflictError);
  EXPECT_EQ(store().spaces().get("id-m2")->owner_id, std::nullopt)
      << "a failed claim changes nothing";

  auto second = store().spaces().claim_pool_member(pool.id, bob_, "his");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->id, "id-m2");
  EXPECT_EQ(store().spaces().claim_pool_member(pool.id, bob_, "more"), std::nullopt);
  EXPECT_EQ(store().spaces().list_for_pool(pool.id).size(), 1u);
}

TEST_F(SpaceTest, RemoveTakesTheLeasesWithIt) {
  auto space = make_space("dev", alice_, template_);
  ASSERT_TRUE(store().leases().allocate_ip("br0", space.id, 10, 20, {}));
  EXPECT_TRUE(store().spaces().remove(space.id));
  EXPECT_FALSE(store().spaces().remove(space.id));
  EXPECT_TRUE(store().leases().list("br0").empty());
}

TEST_F(SpaceTest, StoreTransactionMakesSeveralCallsOne) {
  EXPECT_THROW(
      {
        auto transaction = store().transaction();
        auto space = make_space("dev", alice_, template_);
        EXPECT_TRUE(store().leases().allocate_ip("br0", space.id, 10, 10, {}));
        store().events().append("space.created", space.id);
        throw std::runtime_error("the domain could not be defined");
      },
      std::runtime_error);
  EXPECT_EQ(store().spaces().count(), 0);
  EXPECT_TRUE(store().leases().list("br0").empty());
  EXPECT_TRUE(store().events().events_since(0, 10).empty());

  {
    auto transaction = store().transaction();
    auto space = make_space("dev", alice_, template_);
    ASSERT_TRUE(store().leases().allocate_ip("br0", space.id, 10, 10, {}));
    transaction.commit();
  }
  EXPECT_EQ(store().spaces().count(), 1);
  EXPECT_EQ(store().leases().list("br0").size(), 1u);
}

}  // namespace
}  // namespace bowline::store
