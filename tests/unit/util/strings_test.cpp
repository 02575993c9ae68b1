#include "util/strings.hpp"

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

}  // namespace bowline::util
