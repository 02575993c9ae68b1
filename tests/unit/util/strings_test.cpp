#include "util/strings.hpp"

#include "util/control_chars.hpp"

#include <gtest/gtest.h>

namespace bowline::util {

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("memory", "memroy"), 2u);
  EXPECT_EQ(edit_distance("cpus", "cpu"), 1u);
  EXPECT_EQ(edit_distance("abc", "xyz"), 3u);
}

TEST(Nearest, SuggestsOnlyPlausibleTypos) {
  EXPECT_EQ(nearest("hostnme", {"hostname", "image", "memory"}), "hostname");
  EXPECT_EQ(nearest("zzzzzz", {"hostname", "image", "memory"}), "");
}

TEST(Split, KeepsEmptyParts) {
  EXPECT_EQ(split("a,,b", ','), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(split("", ','), (std::vector<std::string>{""}));
}

TEST(ControlCharacters, EveryLineBreakAndControlButPlainTextAndTabWhenAllowed) {
  for (const char* bad :
       {"a\nb", "a\rb", "\x01", "a\x7f", "a\u0085b", "a\u0090", "a\u2028b", "a\u2029"}) {
    SCOPED_TRACE(bad);
    EXPECT_TRUE(has_control_characters(bad));
    EXPECT_TRUE(has_control_characters(bad, true));
  }
  EXPECT_EQ(control_at("a\u2029", 1)->code, U'\u2029');
  EXPECT_EQ(control_at("a\u2029", 1)->length, 3u);
  EXPECT_EQ(control_at("\u0085", 0)->code, U'\u0085');
  EXPECT_EQ(control_at("\u0085", 0)->length, 2u);
  EXPECT_FALSE(control_at("a\u2029", 0));
  EXPECT_FALSE(control_at("a", 5));
  EXPECT_TRUE(has_control_characters("a\tb"));
  EXPECT_FALSE(has_control_characters("a\tb", true));
  // Neighbours of the separators and other non-ASCII text are plain.
  for (const char* good :
       {"", "plain text", "zo\u00eb \u00a0 \u2027 \u202a \u20ac", "\xc2", "\xe2\x80"})
    EXPECT_FALSE(has_control_characters(good)) << good;
}

}  // namespace bowline::util
