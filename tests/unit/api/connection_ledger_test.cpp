// Which connections the HTTP server keeps under a flood: strangers (no valid credential yet)
// are shed oldest first, per address and in all, and authenticated clients keep a reserve.
#include "api/connection_ledger.hpp"

#include <gtest/gtest.h>

#include "api/address_prefix.hpp"

namespace bowline::api {
namespace {

ConnectionLimits small() {
  ConnectionLimits limits;
  limits.max_connections = 20;
  limits.authenticated_reserve = 5;
  limits.max_per_address = 12;
  limits.max_strangers_per_address = 4;
  return limits;
}

TEST(security_connections, OneAddressFloodingShedsItsOwnOldestStrangersOnly) {
  ConnectionLedger ledger(small());
  const auto other = ledger.admit("192.0.2.9");
  std::vector<ConnectionLedger::Id> flood;
  for (int i = 0; i < 4; ++i) flood.push_back(ledger.admit("192.0.2.1").id);
  for (int i = 0; i < 100; ++i) {
    const auto next = ledger.admit("192.0.2.1");
    ASSERT_NE(next.id, 0u);
    ASSERT_EQ(next.shed.size(), 1u);
    EXPECT_EQ(next.shed.front(), flood.front()) << "not the address's oldest";
    flood.erase(flood.begin());
    flood.push_back(next.id);
  }
  EXPECT_EQ(ledger.open(), 5u);  // the other address's connection is still there
  ledger.release(other.id);
  EXPECT_EQ(ledger.open(), 4u);
}

TEST(security_connections, StrangersFromManyAddressesLeaveTheReserveToAuthenticatedClients) {
  ConnectionLedger ledger(small());
  std::vector<ConnectionLedger::Id> order;
  for (int i = 0; i < 15; ++i) order.push_back(ledger.admit("198.51.100." + std::to_string(i)).id);
  // The 16th stranger is over what the reserve leaves (20 - 5): the oldest goes.
  const auto next = ledger.admit("203.0.113.1");
  ASSERT_NE(next.id, 0u);
  ASSERT_EQ(next.shed.size(), 1u);
  EXPECT_EQ(next.shed.front(), order.front());
  EXPECT_EQ(ledger.strangers(), 15u);
  // A fresh client that authenticates keeps its connection, however many strangers follow.
  const auto fresh = ledger.admit("203.0.113.2");
  ledger.authenticated(fresh.id);
  for (int i = 0; i < 200; ++i)
    for (auto shed : ledger.admit("198.51.100." + std::to_string(i % 250)).shed)
      EXPECT_NE(shed, fresh.id);
  EXPECT_LE(ledger.open(), 20u);
}

TEST(security_connections, WhenAuthenticatedClientsFillEverythingTheNewcomerIsRefused) {
  ConnectionLedger ledger(small());
  for (int i = 0; i < 20; ++i)
    ledger.authenticated(ledger.admit("198.51.100." + std::to_string(i)).id);
  const auto refused = ledger.admit("203.0.113.1");
  EXPECT_EQ(refused.id, 0u);
  EXPECT_TRUE(refused.shed.empty());
  EXPECT_EQ(ledger.open(), 20u);
}

TEST(security_connections, OneAddressHoldsAtMostItsShareOfConnections) {
  ConnectionLedger ledger(small());
  for (int i = 0; i < 12; ++i) ledger.authenticated(ledger.admit("192.0.2.1").id);
  EXPECT_EQ(ledger.admit("192.0.2.1").id, 0u);
  EXPECT_NE(ledger.admit("192.0.2.2").id, 0u);
}

TEST(security_connections, AnIpv6ClientCountsByItsSlash64) {
  ConnectionLedger ledger(small());
  std::vector<ConnectionLedger::Id> ids;
  for (int i = 0; i < 4; ++i)
    ids.push_back(ledger.admit("2001:db8:1:2::" + std::to_string(i + 1)).id);
  const auto next = ledger.admit("2001:db8:1:2:ffff::1");
  ASSERT_EQ(next.shed.size(), 1u);
  EXPECT_EQ(next.shed.front(), ids.front());
  EXPECT_TRUE(ledger.admit("2001:db8:1:3::1").shed.empty());  // another /64
  EXPECT_EQ(address_prefix("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64");
  EXPECT_EQ(address_prefix("[2001:db8::1]"), "2001:db8::/64");
  EXPECT_EQ(address_prefix("::ffff:192.0.2.7"), "192.0.2.7");
  EXPECT_EQ(address_prefix("192.0.2.7"), "192.0.2.7");
}

TEST(security_connections, OutOfDescriptorsTheOldestStrangerGoesFirst) {
  ConnectionLedger ledger(small());
  const auto first = ledger.admit("192.0.2.1").id;
  const auto known = ledger.admit("192.0.2.2").id;
  ledger.authenticated(known);
  ledger.admit("192.0.2.3");
  EXPECT_EQ(ledger.shed_oldest_stranger(), first);
  EXPECT_NE(ledger.shed_oldest_stranger(), known);
  EXPECT_EQ(ledger.shed_oldest_stranger(), std::nullopt);
  EXPECT_EQ(ledger.open(), 1u);
  ledger.release(first);  // already shed: nothing happens
  EXPECT_EQ(ledger.open(), 1u);
}

TEST(security_connections, AStrangerWhoseRequestIsBeingAnsweredIsNotShed) {
  ConnectionLedger ledger(small());
  const auto answered = ledger.admit("192.0.2.1").id;
  ledger.busy(answered);
  for (int i = 0; i < 10; ++i)
    for (auto shed : ledger.admit("192.0.2.1").shed) EXPECT_NE(shed, answered);
  ledger.waiting(answered);  // answered, and not authenticated: the oldest stranger again
  EXPECT_EQ(ledger.admit("192.0.2.1").shed.front(), answered);
}

TEST(security_connections, TheLimitsLeaveDescriptorsForEverythingElse) {
  const auto limits = connection_limits(8192, 512);
  EXPECT_EQ(limits.max_connections, 384u);
  EXPECT_EQ(limits.authenticated_reserve, 48u);
  EXPECT_EQ(connection_limits(8192, 1 << 20).max_connections, 8192u);
  EXPECT_GE(connection_limits(8192, 20).max_connections, 1u);
}

}  // namespace
}  // namespace bowline::api
