// Controls and invisible characters: what must not pass into a generated document or a field
// people compare by eye.
#include "util/control_chars.hpp"

#include <gtest/gtest.h>

namespace bowline::util {
namespace {

TEST(ControlCharsTest, LineBreaksOfEveryKindAreControls) {
  for (const char* text : {"a\nb", "a\rb", "a\xc2\x85z", "a\xe2\x80\xa8", "\x7f", "\t"})
    EXPECT_TRUE(has_control_characters(text)) << text;
  EXPECT_FALSE(has_control_characters("a\tb", true));
  EXPECT_FALSE(has_control_characters("plain text \xc3\xa9"));
}

TEST(ControlCharsTest, InvisibleCharactersAreFound) {
  for (const char* text : {"a\xe2\x80\x8b@example.com",
                           "\xef\xbb\xbf"
                           "a@b",
                           "a\xe2\x80\xae"
                           "moc.x@b",
                           "a\xc2\xad"
                           "b",
                           "a\xe2\x81\xa0"
                           "b",
                           "a\xd8\x9c"
                           "b",
                           "a\xe2\x81\xa6"
                           "b",
                           "a\xe2\x80\x8f"
                           "b"})
    EXPECT_TRUE(has_invisible_characters(text)) << text;
  // Letters of other scripts are visible (homoglyphs are another matter), and so are spaces.
  for (const char* text : {"\xd0\xb0"
                           "dmin@example.com",
                           "a b", "\xe2\x80\x8a", "\xff", ""})
    EXPECT_FALSE(has_invisible_characters(text)) << text;
}

}  // namespace
}  // namespace bowline::util
