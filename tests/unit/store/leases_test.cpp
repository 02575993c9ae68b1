#include "store/leases.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <mutex>
#include <thread>
#include <vector>

#include "store_test_support.hpp"

namespace bowline::store {
namespace {

constexpr std::uint32_t ip(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d) {
  return a << 24 | b << 16 | c << 8 | d;
}

const std::string kNet = "bridge:br0:198.51.100.0/24";

class LeaseTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    owner_ = make_user("alice").id;
    template_ = make_template().id;
  }
  std::string space(const std::string& name) { return make_space(name, owner_, template_).id; }

  std::int64_t owner_ = 0, template_ = 0;
};

TEST_F(LeaseTest, FormatsAddresses) {
  EXPECT_EQ(format_ipv4(ip(198, 51, 100, 7)), "198.51.100.7");
  EXPECT_EQ(format_ipv4(0xffffffff), "255.255.255.255");
}

TEST_F(LeaseTest, HandsOutTheLowestFreeAddressSkippingExcludedAndLeasedOnes) {
  const std::set<std::uint32_t> excluded{ip(198, 51, 100, 0), ip(198, 51, 100, 1),
                                         ip(198, 51, 100, 3), ip(198, 51, 100, 255)};
  auto& leases = store().leases();
  auto a =
      leases.allocate_ip(kNet, space("a"), ip(198, 51, 100, 1), ip(198, 51, 100, 254), excluded);
  auto b =
      leases.allocate_ip(kNet, space("b"), ip(198, 51, 100, 1), ip(198, 51, 100, 254), excluded);
  auto c =
      leases.allocate_ip(kNet, space("c"), ip(198, 51, 100, 1), ip(198, 51, 100, 254), excluded);
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(format_ipv4(a->ip), "198.51.100.2");
  EXPECT_EQ(format_ipv4(b->ip), "198.51.100.4") << ".3 is excluded";
  EXPECT_EQ(format_ipv4(c->ip), "198.51.100.5");
  EXPECT_EQ(a->space_id, "id-a");
  EXPECT_EQ(a->network_key, kNet);
  EXPECT_EQ(a->created_at, clock_.now_unix_ms());

  // A released address is the lowest free one again.
  EXPECT_EQ(leases.release_ips("id-a"), 1);
  auto d =
      leases.allocate_ip(kNet, space("d"), ip(198, 51, 100, 1), ip(198, 51, 100, 254), excluded);
  EXPECT_EQ(format_ipv4(d->ip), "198.51.100.2");
}

TEST_F(LeaseTest, AskingAgainReturnsTheSpacesExistingLease) {
  auto id = space("a");
  auto first = store().leases().allocate_ip(kNet, id, 10, 20, {});
  auto again = store().leases().allocate_ip(kNet, id, 10, 20, {});
  ASSERT_TRUE(first && again);
  EXPECT_EQ(again->ip, first->ip);
  EXPECT_EQ(store().leases().list(kNet).size(), 1u);
}

TEST_F(LeaseTest, NetworksAreIndependent) {
  auto id = space("a");
  auto on_one = store().leases().allocate_ip("net-1", id, 10, 20, {});
  auto on_two = store().leases().allocate_ip("net-2", id, 10, 20, {});
  ASSERT_TRUE(on_one && on_two);
  EXPECT_EQ(on_one->ip, 10u);
  EXPECT_EQ(on_two->ip, 10u);
  EXPECT_EQ(store().leases().leases_of(id).size(), 2u);
  EXPECT_EQ(store().leases().release_ips(id), 2);
  EXPECT_TRUE(store().leases().leases_of(id).empty());
}

TEST_F(LeaseTest, ExhaustedRangeGivesNothing) {
  auto& leases = store().leases();
  EXPECT_TRUE(leases.allocate_ip(kNet, space("a"), 10, 11, {}));
  EXPECT_TRUE(leases.allocate_ip(kNet, space("b"), 10, 11, {}));
  EXPECT_EQ(leases.allocate_ip(kNet, space("c"), 10, 11, {}), std::nullopt);
  EXPECT_EQ(leases.allocate_ip(kNet, space("d"), 10, 12, {12}), std::nullopt)
      << "the only free one is excluded";
  EXPECT_EQ(leases.lease_of("id-c", kNet), std::nullopt);
  EXPECT_THROW(leases.allocate_ip(kNet, "id-c", 12, 11, {}), StoreError) << "empty range";
}

TEST_F(LeaseTest, TopOfTheAddressSpaceDoesNotWrap) {
  auto& leases = store().leases();
  auto a = leases.allocate_ip(kNet, space("a"), 0xfffffffe, 0xffffffff, {});
  auto b = leases.allocate_ip(kNet, space("b"), 0xfffffffe, 0xffffffff, {});
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b->ip, 0xffffffffu);
  EXPECT_EQ(leases.allocate_ip(kNet, space("c"), 0xfffffffe, 0xffffffff, {}), std::nullopt);
}

TEST_F(LeaseTest, UnknownSpaceCannotHoldAnAddress) {
  EXPECT_THROW(store().leases().allocate_ip(kNet, "ghost", 10, 20, {}), NotFoundError);
  EXPECT_THROW(store().leases().change_ip(kNet, "ghost", 10), NotFoundError);
}

TEST_F(LeaseTest, ChangeIpMovesTheLeaseAndRefusesAnotherSpacesAddress) {
  auto a = space("a");
  auto b = space("b");
  auto& leases = store().leases();
  auto held = leases.allocate_ip(kNet, a, ip(198, 51, 100, 10), ip(198, 51, 100, 20), {});
  ASSERT_TRUE(held);
  try {
    leases.change_ip(kNet, b, held->ip);
    FAIL() << "two spaces share an address";
  } catch (const ConflictError& e) {
    EXPECT_STREQ(e.what(), "198.51.100.10 is already held by space 'a' (id-a)");
  }
  auto moved = leases.change_ip(kNet, a, ip(198, 51, 100, 50));
  EXPECT_EQ(moved.ip, ip(198, 51, 100, 50));
  EXPECT_EQ(leases.list(kNet).size(), 1u) << "the old address is free again";
  EXPECT_EQ(leases.holder(kNet, ip(198, 51, 100, 10)), std::nullopt);
  EXPECT_EQ(leases.holder(kNet, ip(198, 51, 100, 50))->space_id, a);
  EXPECT_EQ(leases.change_ip(kNet, a, ip(198, 51, 100, 50)).ip, ip(198, 51, 100, 50))
      << "changing to the address it has is a no-op";
  // A space with no lease yet gets one (create with --ip).
  EXPECT_EQ(leases.change_ip(kNet, b, ip(198, 51, 100, 10)).ip, ip(198, 51, 100, 10));
  EXPECT_EQ(leases.lease_of(b, kNet)->ip, ip(198, 51, 100, 10));
}

// 200 creates race for a range of 91 addresses: 91 get distinct addresses, 109 get nothing.
// `connections` Store objects on the same file: 1 = threads share a connection (its mutex
// orders them), 2 = two connections (SQLite's write lock and busy timeout order them).
void race_for_addresses(const std::filesystem::path& file, const util::Clock& clock,
                        int connections) {
  constexpr int kThreads = 200;
  const std::uint32_t first = ip(198, 51, 100, 10), last = ip(198, 51, 100, 100);  // 91
  const std::set<std::uint32_t> excluded{ip(198, 51, 100, 0), ip(198, 51, 100, 1),
                                         ip(198, 51, 100, 255)};

  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < connections; ++i) stores.push_back(std::make_unique<Store>(file, clock));
  {
    auto& s = *stores[0];
    NewUser user;
    user.username = "racer";
    auto owner = s.users().create(user).id;
    auto tmpl = s.templates().create("bridged", "x").id;
    auto transaction = s.transaction();
    for (int i = 0; i < kThreads; ++i) {
      NewSpace space;
      space.id = "space-" + std::to_string(i);
      space.name = space.id;
      space.owner_id = owner;
      space.template_id = tmpl;
      space.uuid = space.id;
      space.domain_name = space.id;
      s.spaces().create(space);
    }
    transaction.commit();
  }

  std::latch start(kThreads);
  std::mutex results_mutex;
  std::vector<std::uint32_t> granted;
  std::atomic<int> exhausted{0};
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      auto& s = *stores[static_cast<std::size_t>(i % connections)];
      start.arrive_and_wait();
      try {
        auto lease =
            s.leases().allocate_ip(kNet, "space-" + std::to_string(i), first, last, excluded);
        std::lock_guard guard(results_mutex);
        if (lease)
          granted.push_back(lease->ip);
        else
          ++exhausted;
      } catch (const std::exception& e) {
        std::lock_guard guard(results_mutex);
        errors.push_back(e.what());
      }
    });
  for (auto& thread : threads) thread.join();

  EXPECT_THAT(errors, ::testing::IsEmpty());
  EXPECT_EQ(granted.size(), 91u);
  EXPECT_EQ(exhausted, 109);
  std::set<std::uint32_t> distinct(granted.begin(), granted.end());
  EXPECT_EQ(distinct.size(), granted.size()) << "an address was handed out twice";
  EXPECT_EQ(*distinct.begin(), first);
  EXPECT_EQ(*distinct.rbegin(), last);

  // What the database says agrees: 91 leases, 91 addresses, 91 spaces.
  auto leases = stores[0]->leases().list(kNet);
  EXPECT_EQ(leases.size(), 91u);
  std::set<std::string> holders;
  for (const auto& lease : leases) holders.insert(lease.space_id);
  EXPECT_EQ(holders.size(), 91u);
}

TEST_F(LeaseTest, TwoHundredThreadsOnOneStoreNeverShareAnAddress) {
  close();
  race_for_addresses(dir_.path() / "race.db", clock_, 1);
}

TEST_F(LeaseTest, TwoHundredThreadsOnTwoConnectionsNeverShareAnAddress) {
  close();
  race_for_addresses(dir_.path() / "race.db", clock_, 2);
}

}  // namespace
}  // namespace bowline::store
