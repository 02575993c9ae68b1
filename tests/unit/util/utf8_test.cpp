#include "util/utf8.hpp"

#include <gtest/gtest.h>

#include "util/strings.hpp"

namespace bowline::util {
namespace {

TEST(Utf8, DecodesWellFormedSequencesOnly) {
  EXPECT_EQ(decode_utf8("a", 0)->value, U'a');
  EXPECT_EQ(decode_utf8("\xC3\xA9", 0)->length, 2u);                    // é
  EXPECT_EQ(decode_utf8("\xE2\x80\xA8", 0)->value, U'\u2028');          // line separator
  EXPECT_EQ(decode_utf8("\xF0\x9F\x9A\x80", 0)->value, U'\U0001F680');  // rocket
  for (const char* bad : {"\x80", "\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                          "\xF5\x80\x80\x80", "\xC3", "\xE2\x80"})
    EXPECT_FALSE(decode_utf8(bad, 0)) << ::testing::PrintToString(std::string(bad));
  EXPECT_EQ(invalid_utf8_at("ok \xC3\xA9 then \xFF"), 11u);
  EXPECT_EQ(invalid_utf8_at("all fine \xE2\x9C\x93"), std::string_view::npos);
}

TEST(Uuid, EightFourFourFourTwelve) {
  EXPECT_TRUE(looks_like_uuid("3b1f7c52-9a0e-4d8b-8f4e-2c6d1a9e5b70"));
  EXPECT_TRUE(looks_like_uuid("3B1F7C52-9A0E-4D8B-8F4E-2C6D1A9E5B70"));
  EXPECT_FALSE(looks_like_uuid("3b1f7c52-9a0e-4d8b-8f4e-2c6d1a9e5b7"));
  EXPECT_FALSE(looks_like_uuid("3b1f7c52x9a0e-4d8b-8f4e-2c6d1a9e5b70"));
  EXPECT_FALSE(looks_like_uuid("dev"));
}

}  // namespace
}  // namespace bowline::util
