// Property tests for IPv4 addresses and networks (spec/ipv4.hpp).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <string>

#include "spec/ipv4.hpp"

namespace bowline::spec {
namespace {

std::uint32_t mask_of(unsigned prefix) {
  return prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix);
}

RC_GTEST_PROP(Ipv4Address, ToStringThenParseIsIdentity, (std::uint32_t value)) {
  const Ipv4Address a{value};
  const auto parsed = Ipv4Address::parse(a.to_string());
  RC_ASSERT(parsed.has_value());
  RC_ASSERT(parsed->value == value);
}

RC_GTEST_PROP(Ipv4Address, ParsedTextIsCanonical, (std::string text)) {
  if (const auto a = Ipv4Address::parse(text)) RC_ASSERT(a->to_string() == text);
}

RC_GTEST_PROP(Ipv4Address, LeadingZeroOctetsAreRejected, (std::uint32_t value)) {
  const int octet = *rc::gen::inRange(0, 4);
  std::string text;
  for (int i = 0; i < 4; ++i) {
    if (i) text += '.';
    if (i == octet) text += '0';
    text += std::to_string((value >> (24 - 8 * i)) & 255);
  }
  RC_ASSERT(!Ipv4Address::parse(text).has_value());
}

RC_GTEST_PROP(Ipv4Network, ToStringThenParseIsIdentity, (std::uint32_t value)) {
  const unsigned prefix = *rc::gen::inRange(0u, 33u);
  const Ipv4Network n{{value & mask_of(prefix)}, prefix};
  const auto parsed = Ipv4Network::parse(n.to_string());
  RC_ASSERT(parsed.has_value());
  RC_ASSERT(*parsed == n);
  RC_ASSERT(parsed->mask() == mask_of(prefix));
}

RC_GTEST_PROP(Ipv4Network, HostBitsMustBeZero, (std::uint32_t value)) {
  const unsigned prefix = *rc::gen::inRange(0u, 32u);
  RC_PRE((value & ~mask_of(prefix)) != 0);
  const auto text = Ipv4Address{value}.to_string() + "/" + std::to_string(prefix);
  RC_ASSERT(!Ipv4Network::parse(text).has_value());
}

RC_GTEST_PROP(Ipv4Network, ContainsExactlyTheAddressesUnderTheMask,
              (std::uint32_t net, std::uint32_t other)) {
  const unsigned prefix = *rc::gen::inRange(0u, 33u);
  const Ipv4Network n{{net & mask_of(prefix)}, prefix};
  RC_ASSERT(n.contains(n.address));
  RC_ASSERT(n.contains(n.broadcast()));
  RC_ASSERT(n.contains(Ipv4Address{other}) == ((other & mask_of(prefix)) == n.address.value));
}

RC_GTEST_PROP(Ipv4Network, FirstAndLastUsable, (std::uint32_t net)) {
  const unsigned prefix = *rc::gen::inRange(0u, 33u);
  const Ipv4Network n{{net & mask_of(prefix)}, prefix};
  const auto first = n.first_usable();
  const auto last = n.last_usable();
  RC_ASSERT(n.contains(first));
  RC_ASSERT(n.contains(last));
  RC_ASSERT(first <= last);
  if (prefix >= 31) {
    RC_ASSERT(first == n.address);
    RC_ASSERT(last == n.broadcast());
  } else {
    RC_ASSERT(first.value == n.address.value + 1);
    RC_ASSERT(last.value == n.broadcast().value - 1);
    RC_ASSERT(last.value - first.value + 1 == (std::uint64_t{1} << (32 - prefix)) - 2);
  }
}

TEST(Ipv4, Examples) {
  EXPECT_EQ(Ipv4Address::parse("198.51.100.7")->value, 0xC6336407u);
  EXPECT_FALSE(Ipv4Address::parse("256.0.0.1"));
  EXPECT_FALSE(Ipv4Address::parse("1.2.3"));
  EXPECT_FALSE(Ipv4Address::parse("1.2.3.4.5"));
  EXPECT_FALSE(Ipv4Address::parse("1.2.3.4 "));
  EXPECT_FALSE(Ipv4Address::parse("1..3.4"));
  EXPECT_FALSE(Ipv4Address::parse("0x1.2.3.4"));
  EXPECT_FALSE(Ipv4Address::parse(""));
  const auto n = Ipv4Network::parse("198.51.100.0/24");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->broadcast().to_string(), "198.51.100.255");
  EXPECT_EQ(n->first_usable().to_string(), "198.51.100.1");
  EXPECT_EQ(n->last_usable().to_string(), "198.51.100.254");
  EXPECT_FALSE(Ipv4Network::parse("198.51.100.0/24/1"));
  EXPECT_FALSE(Ipv4Network::parse("198.51.100.0/+4"));
  EXPECT_FALSE(Ipv4Network::parse("198.51.100.0/ 4"));
  EXPECT_EQ(Ipv4Network::parse("0.0.0.0/0")->last_usable().to_string(), "255.255.255.254");
}

}  // namespace
}  // namespace bowline::spec
