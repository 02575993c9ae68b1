// Property tests for the size, quantity and count parsers (spec/quantity.hpp), plus the
// boundaries worth pinning by example.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "spec/quantity.hpp"

namespace bowline::spec {
namespace {

__extension__ typedef unsigned __int128 Wide;
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

// Magnitudes spread over the whole range, not just small numbers.
rc::Gen<std::uint64_t> any_magnitude() {
  return rc::gen::oneOf(
      rc::gen::inRange<std::uint64_t>(0, 5000),
      rc::gen::map(rc::gen::pair(rc::gen::arbitrary<std::uint64_t>(), rc::gen::inRange(0, 64)),
                   [](std::pair<std::uint64_t, int> p) {
                     return p.second == 0 ? std::uint64_t{0} : p.first >> (64 - p.second);
                   }));
}

std::string with_case(std::string s, bool lower) {
  if (lower)
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// parse_size: knot's sizes

RC_GTEST_PROP(ParseSize, NumberWithEachBinaryUnitIsNTimesTwoToTheK, ()) {
  const auto n = *any_magnitude();
  const int k = *rc::gen::inRange(0, 5);  // "", K, M, G, T
  const std::string letters[] = {"", "K", "M", "G", "T"};
  std::string unit = letters[k];
  if (k > 0) unit += *rc::gen::element<std::string>("", "i", "B", "iB");
  unit = with_case(unit, *rc::gen::arbitrary<bool>());
  const std::string space = k > 0 && *rc::gen::arbitrary<bool>() ? " " : "";
  const auto text = std::to_string(n) + space + unit;
  const auto parsed = parse_size(text);
  const Wide expected = static_cast<Wide>(n) << (10 * k);
  if (expected > kMax) {
    RC_ASSERT(!parsed.ok());
    RC_ASSERT(parsed.error() == "\"" + text + "\" is too large");
  } else {
    RC_ASSERT(parsed.ok());
    RC_ASSERT(parsed.value() == static_cast<std::uint64_t>(expected));
  }
}

RC_GTEST_PROP(ParseSize, FormatThenParseIsIdentityUpToTebibytes, ()) {
  // format_binary_size writes Pi and Ei beyond T, which knot sizes do not have.
  const auto bytes = *rc::gen::inRange<std::uint64_t>(0, std::uint64_t{1} << 50);
  const auto text = format_binary_size(bytes);
  const auto parsed = parse_size(text);
  RC_ASSERT(parsed.ok());
  RC_ASSERT(parsed.value() == bytes);
}

RC_GTEST_PROP(ParseSize, FractionsAreAlwaysRejected, ()) {
  const auto whole = *rc::gen::inRange<std::uint64_t>(0, 100000);
  const auto frac = *rc::gen::inRange<std::uint64_t>(0, 1000);
  const auto unit = *rc::gen::element<std::string>("", "K", "M", "G", "T", "Gi", "GiB");
  const auto text = std::to_string(whole) + "." + std::to_string(frac) + unit;
  const auto parsed = parse_size(text);
  RC_ASSERT(!parsed.ok());
  RC_ASSERT(parsed.error().find("has a fraction") != std::string::npos);
}

RC_GTEST_PROP(ParseSize, UnknownUnitLettersAreRejected, ()) {
  const auto n = *rc::gen::inRange<std::uint64_t>(1, 100000);
  const char letter = *rc::gen::inRange('A', static_cast<char>('Z' + 1));
  RC_PRE(letter != 'K' && letter != 'M' && letter != 'G' && letter != 'T' && letter != 'B' &&
         letter != 'I');
  const auto parsed = parse_size(std::to_string(n) + letter);
  RC_ASSERT(!parsed.ok());
  RC_ASSERT(parsed.error().find("unknown unit") != std::string::npos);
}

RC_GTEST_PROP(ParseSize, ArbitraryTextNeverThrowsAndSuccessMeansDigitsFirst, (std::string text)) {
  const auto parsed = parse_size(text);
  if (parsed.ok()) {
    RC_ASSERT(!text.empty());
    RC_ASSERT(std::isdigit(static_cast<unsigned char>(text.front())) != 0);
  } else {
    RC_ASSERT(!parsed.error().empty());
  }
}

TEST(ParseSize, Boundaries) {
  EXPECT_EQ(parse_size("16777215T").value(), 16777215ull << 40);
  EXPECT_FALSE(parse_size("16777216T").ok());
  EXPECT_EQ(parse_size("18446744073709551615").value(), kMax);
  EXPECT_FALSE(parse_size("18446744073709551616").ok());
  EXPECT_EQ(parse_size("0").value(), 0u);
  EXPECT_EQ(parse_size("1B").value(), 1u);
  EXPECT_FALSE(parse_size("").ok());
  EXPECT_FALSE(parse_size("1i").ok());
  EXPECT_FALSE(parse_size("1iB").ok());
}

// parse_memory_quantity: Kubernetes quantities as bytes

const std::vector<std::pair<std::string, Wide>>& units() {
  static const std::vector<std::pair<std::string, Wide>> all = {{"", 1},
                                                                {"k", 1000},
                                                                {"M", 1000000},
                                                                {"G", 1000000000},
                                                                {"T", 1000000000000},
                                                                {"P", 1000000000000000},
                                                                {"E", 1000000000000000000},
                                                                {"Ki", Wide{1} << 10},
                                                                {"Mi", Wide{1} << 20},
                                                                {"Gi", Wide{1} << 30},
                                                                {"Ti", Wide{1} << 40},
                                                                {"Pi", Wide{1} << 50},
                                                                {"Ei", Wide{1} << 60}};
  return all;
}

RC_GTEST_PROP(ParseMemoryQuantity, WholeNumberTimesItsUnit, ()) {
  const auto n = *any_magnitude();
  const auto& [suffix, multiplier] = *rc::gen::elementOf(units());
  const auto text = std::to_string(n) + suffix;
  const auto parsed = parse_memory_quantity(text);
  const Wide expected = static_cast<Wide>(n) * multiplier;
  if (expected > kMax) {
    RC_ASSERT(!parsed.ok());
    RC_ASSERT(parsed.error().find("is too large") != std::string::npos);
  } else {
    RC_ASSERT(parsed.ok());
    RC_ASSERT(parsed.value() == static_cast<std::uint64_t>(expected));
  }
}

RC_GTEST_PROP(ParseMemoryQuantity, FractionsOnlyWhenTheyGiveWholeBytes, ()) {
  const auto whole = *rc::gen::inRange<std::uint64_t>(0, 1000);
  const int digits = *rc::gen::inRange(1, 7);
  Wide scale = 1;
  for (int i = 0; i < digits; ++i) scale *= 10;
  const auto fraction = *rc::gen::inRange<std::uint64_t>(0, static_cast<std::uint64_t>(scale));
  const auto& [suffix, multiplier] = *rc::gen::elementOf(units());
  std::string fraction_text = std::to_string(fraction);
  fraction_text.insert(0, static_cast<std::size_t>(digits) - fraction_text.size(), '0');
  const auto text = std::to_string(whole) + "." + fraction_text + suffix;
  const auto parsed = parse_memory_quantity(text);
  const Wide numerator = static_cast<Wide>(fraction) * multiplier;
  if (static_cast<Wide>(whole) * multiplier > kMax) {
    RC_ASSERT(!parsed.ok());
    RC_ASSERT(parsed.error() == "\"" + text + "\" is too large");
  } else if (numerator % scale != 0) {
    RC_ASSERT(!parsed.ok());
    RC_ASSERT(parsed.error() == "\"" + text + "\" is not a whole number of bytes");
  } else {
    const Wide expected = static_cast<Wide>(whole) * multiplier + numerator / scale;
    if (expected > kMax) {
      RC_ASSERT(!parsed.ok());
    } else {
      RC_ASSERT(parsed.ok());
      RC_ASSERT(parsed.value() == static_cast<std::uint64_t>(expected));
    }
  }
}

RC_GTEST_PROP(ParseMemoryQuantity, FormatBinarySizeParsesBack, (std::uint64_t bytes)) {
  const auto parsed = parse_memory_quantity(format_binary_size(bytes));
  RC_ASSERT(parsed.ok());
  RC_ASSERT(parsed.value() == bytes);
}

RC_GTEST_PROP(ParseMemoryQuantity, MilliAndExponentsAreRejected, ()) {
  const auto n = *rc::gen::inRange<std::uint64_t>(0, 1000000);
  const auto suffix = *rc::gen::element<std::string>("m", "e", "e3", "E3", "e-1", "E+2");
  const auto parsed = parse_memory_quantity(std::to_string(n) + suffix);
  RC_ASSERT(!parsed.ok());
}

RC_GTEST_PROP(ParseMemoryQuantity, ArbitraryTextNeverThrows, (std::string text)) {
  const auto parsed = parse_memory_quantity(text);
  if (!parsed.ok()) RC_ASSERT(!parsed.error().empty());
}

TEST(ParseMemoryQuantity, Boundaries) {
  EXPECT_EQ(parse_memory_quantity("1M").value(), 1000000u);
  EXPECT_EQ(parse_memory_quantity("1000k").value(), 1000000u);
  EXPECT_EQ(parse_memory_quantity("0.001G").value(), 1000000u);
  EXPECT_EQ(parse_memory_quantity("1000000").value(), 1000000u);
  EXPECT_EQ(parse_memory_quantity(".5Ki").value(), 512u);
  EXPECT_EQ(parse_memory_quantity("5.Ki").value(), 5120u);
  EXPECT_EQ(parse_memory_quantity("1E").value(), 1000000000000000000u);
  EXPECT_EQ(parse_memory_quantity("1Ei").value(), 1ull << 60);
  EXPECT_EQ(parse_memory_quantity("15Ei").value(), 15ull << 60);
  EXPECT_FALSE(parse_memory_quantity("16Ei").ok());
  EXPECT_EQ(parse_memory_quantity("18446744073709551615").value(), kMax);
  EXPECT_FALSE(parse_memory_quantity("18446744073709551616").ok());
  EXPECT_EQ(parse_memory_quantity("1.000000000000000000000Gi").value(), 1ull << 30);
  EXPECT_THAT(parse_memory_quantity("1.0000000000000000001Gi").error(),
              ::testing::HasSubstr("too many decimals"));
  EXPECT_THAT(parse_memory_quantity("1e").error(), ::testing::HasSubstr("exponent"));
  EXPECT_THAT(parse_memory_quantity("1Ki5").error(), ::testing::HasSubstr("unknown suffix"));
  EXPECT_THAT(parse_memory_quantity(".").error(), ::testing::HasSubstr("is not a quantity"));
  EXPECT_THAT(parse_memory_quantity("").error(), ::testing::HasSubstr("must not be empty"));
  EXPECT_THAT(parse_memory_quantity("+1Gi").error(), ::testing::HasSubstr("has a sign"));
}

// parse_whole_number: counts (cpus, resources.cpu/sockets, ports)

RC_GTEST_PROP(ParseWholeNumber, EveryCanonicalDecimalInRangeParsesToItself, ()) {
  const auto max =
      *rc::gen::oneOf(rc::gen::just<std::uint64_t>(4294967295), rc::gen::just<std::uint64_t>(65535),
                      rc::gen::inRange<std::uint64_t>(1, kMax));
  const auto n = *rc::gen::inRange<std::uint64_t>(1, max);
  const auto parsed = parse_whole_number(std::to_string(n), max);
  RC_ASSERT(parsed.ok());
  RC_ASSERT(parsed.value() == n);
  const auto top = parse_whole_number(std::to_string(max), max);
  RC_ASSERT(top.ok());
  RC_ASSERT(top.value() == max);
}

RC_GTEST_PROP(ParseWholeNumber, AboveTheMaximumIsRejected, ()) {
  const auto max = *rc::gen::inRange<std::uint64_t>(1, kMax - 1);
  const auto n = *rc::gen::inRange<std::uint64_t>(max + 1, kMax);
  const auto parsed = parse_whole_number(std::to_string(n), max);
  RC_ASSERT(!parsed.ok());
  RC_ASSERT(parsed.error() == "\"" + std::to_string(n) + "\" is above " + std::to_string(max));
}

RC_GTEST_PROP(ParseWholeNumber, LeadingZerosAreRejected, ()) {
  const auto n = *rc::gen::inRange<std::uint64_t>(0, 4294967295);
  const auto zeros = *rc::gen::inRange(1, 4);
  const auto text = std::string(static_cast<std::size_t>(zeros), '0') + std::to_string(n);
  const auto parsed = parse_whole_number(text, 4294967295);
  RC_ASSERT(!parsed.ok());
  RC_ASSERT(parsed.error().find("leading zero") != std::string::npos);
}

RC_GTEST_PROP(ParseWholeNumber, SuccessMeansCanonicalDigits, (std::string text)) {
  const auto parsed = parse_whole_number(text, 4294967295);
  if (parsed.ok()) {
    RC_ASSERT(std::to_string(parsed.value()) == text);
    RC_ASSERT(parsed.value() >= 1u);
    RC_ASSERT(parsed.value() <= 4294967295u);
  }
}

TEST(ParseWholeNumber, Rejections) {
  const std::uint64_t max = 4294967295;
  EXPECT_THAT(parse_whole_number("0", max).error(), ::testing::HasSubstr("0 is not allowed"));
  EXPECT_THAT(parse_whole_number("4294967296", max).error(), ::testing::HasSubstr("is above"));
  EXPECT_THAT(parse_whole_number("99999999999999999999999", max).error(),
              ::testing::HasSubstr("is above"));
  EXPECT_THAT(parse_whole_number("-1", max).error(), ::testing::HasSubstr("is negative"));
  EXPECT_THAT(parse_whole_number("+1", max).error(), ::testing::HasSubstr("has a sign"));
  EXPECT_THAT(parse_whole_number("1.5", max).error(), ::testing::HasSubstr("is a fraction"));
  EXPECT_THAT(parse_whole_number("500m", max).error(), ::testing::HasSubstr("millicores"));
  EXPECT_THAT(parse_whole_number("2Gi", max).error(), ::testing::HasSubstr("is not a whole"));
  EXPECT_THAT(parse_whole_number("08", max).error(), ::testing::HasSubstr("leading zero"));
  EXPECT_THAT(parse_whole_number("", max).error(), ::testing::HasSubstr("expected a whole"));
  EXPECT_THAT(parse_whole_number(" 1", max).error(), ::testing::HasSubstr("is not a whole"));
}

TEST(FormatBinarySize, LargestExactUnit) {
  EXPECT_EQ(format_binary_size(0), "0");
  EXPECT_EQ(format_binary_size(1000), "1000");
  EXPECT_EQ(format_binary_size(1024), "1Ki");
  EXPECT_EQ(format_binary_size(1536ull << 20), "1536Mi");
  EXPECT_EQ(format_binary_size(4ull << 30), "4Gi");
  EXPECT_EQ(format_binary_size(1ull << 60), "1Ei");
  EXPECT_EQ(format_binary_size(1ull << 63), "8Ei");
}

}  // namespace
}  // namespace bowline::spec
