// The network: block: bridged and nat modes, the address rules, literal values only.
#include <gtest/gtest.h>

#include <string>

#include "../common/addresses.hpp"
#include "spec_test_support.hpp"

namespace bowline::spec {
namespace {

using test_support::ip;

using test::ErrorCount;
using test::HasError;
using test::load;
using test::Valid;

// `network:` is line 2; its keys start on line 3, values at column 3 + key length + 2.
LoadResult net(const std::string& body) {
  return load("image: debian-12\nnetwork:\n" + body);
}

TEST(Network, FullBridgedBlock) {
  const auto r = net(R"(  mode: bridged
  bridge: br1
  cidr: 198.51.100.0/24
  ip_range_start: 198.51.100.10
  ip_range_end: 198.51.100.100
  gateway: 198.51.100.1
)");
  ASSERT_TRUE(Valid(r));
  const auto& n = r.spec->network;
  EXPECT_EQ(n.mode, NetworkMode::Bridged);
  EXPECT_EQ(n.bridge, "br1");
  EXPECT_EQ(n.cidr->to_string(), "198.51.100.0/24");
  EXPECT_EQ(n.range_start, ip("198.51.100.10"));
  EXPECT_EQ(n.range_end, ip("198.51.100.100"));
  EXPECT_EQ(n.gateway, ip("198.51.100.1"));
}

TEST(Network, BridgedIsTheDefaultModeWithBr0AndTheWholeUsableSubnet) {
  for (const char* mode : {"", "  mode:\n", "  mode: ''\n"}) {
    SCOPED_TRACE(mode);
    const auto r = net(std::string(mode) + "  cidr: 198.51.100.0/24\n");
    ASSERT_TRUE(Valid(r));
    const auto& n = r.spec->network;
    EXPECT_EQ(n.mode, NetworkMode::Bridged);
    EXPECT_EQ(n.bridge, "br0");
    EXPECT_EQ(n.range_start, ip("198.51.100.1"));
    EXPECT_EQ(n.range_end, ip("198.51.100.254"));
    EXPECT_FALSE(n.gateway);
  }
}

TEST(Network, SmallPrefixesUseEveryAddress) {
  auto r = net("  cidr: 198.51.100.8/31\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->network.range_start, ip("198.51.100.8"));
  EXPECT_EQ(r.spec->network.range_end, ip("198.51.100.9"));
  r = net("  cidr: 198.51.100.8/32\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->network.range_start, ip("198.51.100.8"));
  EXPECT_EQ(r.spec->network.range_end, ip("198.51.100.8"));
}

TEST(Network, NatDefaultsToTheDefaultLibvirtNetwork) {
  auto r = net("  mode: nat\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->network.mode, NetworkMode::Nat);
  EXPECT_EQ(r.spec->network.bridge, "default");
  EXPECT_FALSE(r.spec->network.cidr);
  EXPECT_FALSE(r.spec->network.range_start);
  r = net("  mode: nat\n  bridge: isolated-net\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->network.bridge, "isolated-net");
}

TEST(Network, NatRejectsEveryAddressField) {
  const auto r = net(R"(  mode: nat
  cidr: 198.51.100.0/24
  ip_range_start: 198.51.100.10
  ip_range_end: 198.51.100.100
  gateway: 198.51.100.1
)");
  ASSERT_TRUE(ErrorCount(r, 4));
  const char* msg = "must not be set in nat mode: the VM gets its address from the libvirt network";
  EXPECT_TRUE(HasError(r, "network.cidr", 4, 9, msg));
  EXPECT_TRUE(HasError(r, "network.ip_range_start", 5, 19, msg));
  EXPECT_TRUE(HasError(r, "network.ip_range_end", 6, 17, msg));
  EXPECT_TRUE(HasError(r, "network.gateway", 7, 12, msg));
}

TEST(Network, NatWithCidrAlone) {
  const auto r = load("image: debian-12\nnetwork: {mode: nat, cidr: 10.0.0.0/8}\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "network.cidr", 2, 28, "must not be set in nat mode"));
}

TEST(Network, UnknownMode) {
  const auto r = net("  mode: NAT\n");
  EXPECT_TRUE(
      HasError(r, "network.mode", 3, 9, "\"NAT\" is not a network mode: use bridged or nat"));
}

TEST(Network, BridgedNeedsCidr) {
  const auto r = net("  mode: bridged\n  bridge: br0\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "network.cidr", 3, 3,
                       "bridged mode needs the network's cidr (e.g. 198.51.100.0/24)"));
}

TEST(Network, InvalidCidr) {
  for (const char* c : {"198.51.100.7/24", "198.51.100.0/33", "198.51.100.0", "2001:db8::/32",
                        "010.0.0.0/8", "10.0.0.0/08", "10.0.0.0/", "10.0.0/8", "any"}) {
    SCOPED_TRACE(c);
    const auto r = net(std::string("  cidr: '") + c + "'\n");
    ASSERT_TRUE(ErrorCount(r, 1));
    EXPECT_TRUE(HasError(
        r, "network.cidr", 3, 9,
        std::string("\"") + c + "\" is not an IPv4 network in CIDR form with the host bits zero"));
  }
}

TEST(Network, RangeNeedsBothEndsOrNeither) {
  auto r = net("  cidr: 198.51.100.0/24\n  ip_range_start: 198.51.100.10\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(
      HasError(r, "network", 4, 19,
               "give both ip_range_start and ip_range_end, or neither (the whole network)"));
  r = net("  cidr: 198.51.100.0/24\n  ip_range_end: 198.51.100.10\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "network", 4, 17, "give both ip_range_start and ip_range_end"));
}

TEST(Network, RangeOutsideTheNetwork) {
  const auto r = net(R"(  cidr: 198.51.100.0/24
  ip_range_start: 198.51.101.10
  ip_range_end: 203.0.113.5
)");
  ASSERT_TRUE(ErrorCount(r, 2));
  EXPECT_TRUE(HasError(r, "network.ip_range_start", 4, 19,
                       "198.51.101.10 is outside the network 198.51.100.0/24"));
  EXPECT_TRUE(HasError(r, "network.ip_range_end", 5, 17,
                       "203.0.113.5 is outside the network 198.51.100.0/24"));
}

TEST(Network, StartAfterEnd) {
  const auto r = net(R"(  cidr: 198.51.100.0/24
  ip_range_start: 198.51.100.100
  ip_range_end: 198.51.100.10
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "network.ip_range_start", 4, 19,
                       "198.51.100.100 is after the range end 198.51.100.10"));
}

TEST(Network, SingleAddressRange) {
  const auto r = net(R"(  cidr: 198.51.100.0/24
  ip_range_start: 198.51.100.7
  ip_range_end: 198.51.100.7
)");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->network.range_start, r.spec->network.range_end);
}

TEST(Network, GatewayOutsideTheNetwork) {
  const auto r = net("  cidr: 198.51.100.0/24\n  gateway: 198.51.99.1\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(
      HasError(r, "network.gateway", 4, 12, "198.51.99.1 is outside the network 198.51.100.0/24"));
}

TEST(Network, InvalidAddresses) {
  const auto r = net(R"(  cidr: 198.51.100.0/24
  ip_range_start: 198.51.100.300
  ip_range_end: 198.51.100.010
  gateway: gw.local
)");
  ASSERT_TRUE(ErrorCount(r, 3));
  EXPECT_TRUE(
      HasError(r, "network.ip_range_start", 4, 19, "\"198.51.100.300\" is not an IPv4 address"));
  EXPECT_TRUE(
      HasError(r, "network.ip_range_end", 5, 17, "\"198.51.100.010\" is not an IPv4 address"));
  EXPECT_TRUE(HasError(r, "network.gateway", 6, 12, "\"gw.local\" is not an IPv4 address"));
}

TEST(Network, ValuesMustBeLiteral) {
  const auto r = net(R"(  mode: ${{ .var.mode }}
  bridge: ${{ .var.bridge }}
  cidr: ${{ .var.cidr }}
  gateway: ${{ .space.ip_address }}
)");
  ASSERT_TRUE(ErrorCount(r, 4));
  const char* msg = "must be a literal value: template variables are not expanded here";
  EXPECT_TRUE(HasError(r, "network.mode", 3, 9, msg));
  EXPECT_TRUE(HasError(r, "network.bridge", 4, 11, msg));
  EXPECT_TRUE(HasError(r, "network.cidr", 5, 9, msg));
  EXPECT_TRUE(HasError(r, "network.gateway", 6, 12, msg));
}

TEST(Network, AddressesAreCheckedEvenWithoutAValidCidr) {
  auto r = net("  cidr: 198.51.100.7/24\n  gateway: 198.51.100.300\n  ip_range_end: 10.0.0.1\n");
  ASSERT_TRUE(ErrorCount(r, 3));
  EXPECT_TRUE(HasError(r, "network.cidr", 3, 9, "is not an IPv4 network"));
  EXPECT_TRUE(HasError(r, "network.gateway", 4, 12, "is not an IPv4 address"));
  EXPECT_TRUE(HasError(r, "network", 5, 17, "give both ip_range_start and ip_range_end"));
  r = net("  gateway: 198.51.100.1\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "network.cidr", 3, 3, "bridged mode needs the network's cidr"));
}

TEST(Network, LiteralRuleHoldsWithValuesToo) {
  const auto r =
      load("image: debian-12\nnetwork:\n  cidr: ${{ .var.cidr }}\n",
           Variables{{"user.username", "a"}, {"space.name", "b"}, {"var.cidr", "198.51.100.0/24"}});
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "network.cidr", 3, 9, "must be a literal value"));
}

TEST(Network, UnknownKeyIsAnErrorWithASuggestion) {
  const auto r = net("  cidr: 198.51.100.0/24\n  gatway: 198.51.100.1\n  dns: 1.1.1.1\n");
  ASSERT_TRUE(ErrorCount(r, 2));
  EXPECT_TRUE(HasError(r, "network.gatway", 4, 3, "unknown field (did you mean gateway?)"));
  EXPECT_TRUE(HasError(r, "network.dns", 5, 3, "unknown field"));
}

TEST(Network, BridgeNames) {
  auto r = net("  cidr: 198.51.100.0/24\n  bridge: a-very-long-bridge\n");
  EXPECT_TRUE(HasError(r, "network.bridge", 4, 11,
                       "\"a-very-long-bridge\" is not a bridge name (at most 15 letters, digits"));
  r = net("  cidr: 198.51.100.0/24\n  bridge: br/0\n");
  EXPECT_TRUE(HasError(r, "network.bridge", 4, 11, "is not a bridge name"));
  EXPECT_TRUE(Valid(net("  cidr: 198.51.100.0/24\n  bridge: " + std::string(15, 'b') + "\n")));
  r = net("  mode: nat\n  bridge: \"a/b\"\n");
  EXPECT_TRUE(HasError(r, "network.bridge", 4, 11, "\"a/b\" is not a libvirt network name"));
}

// A Cozystack values file has no network: block: the node's natural one, said in the origins.
TEST(Network, AbsentIsTheNodesNatAndSaysSo) {
  for (const char* text : {"image: debian-12\n", "image: debian-12\nnetwork:\n"}) {
    SCOPED_TRACE(text);
    const auto r = load(text);
    ASSERT_TRUE(Valid(r));
    EXPECT_EQ(r.spec->network.mode, NetworkMode::Nat);
    EXPECT_EQ(r.spec->network.bridge, "default");
    EXPECT_EQ(r.spec->origins.at("network").rfind("default", 0), 0u)
        << r.spec->origins.at("network");
  }
  auto r = load("image: debian-12\nnetwork: nat\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "network", 2, 10, "expected a mapping, got a single value"));
}

}  // namespace
}  // namespace bowline::spec
