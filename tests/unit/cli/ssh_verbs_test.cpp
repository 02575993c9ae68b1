// The pure parts of bowline ssh, ssh-config and forward: names as ssh gives them, the managed
// block of ~/.ssh/config, and port pairs.
#include "cli/ssh_verbs.hpp"

#include <gtest/gtest.h>

namespace bowline::cli {
namespace {

TEST(ssh_host, NamesAsSshGivesThem) {
  EXPECT_EQ(parse_ssh_host("dev").space, "dev");
  EXPECT_FALSE(parse_ssh_host("dev").owner);
  EXPECT_EQ(parse_ssh_host("dev.bowline").space, "dev");
  EXPECT_FALSE(parse_ssh_host("dev.bowline").owner);
  const auto others = parse_ssh_host("dev.alice.bowline");
  EXPECT_EQ(others.space, "dev");
  EXPECT_EQ(others.owner, "alice");
  // What space info tells an admin to type for another user's space.
  const auto typed = parse_ssh_host("dev.alice");
  EXPECT_EQ(typed.space, "dev");
  EXPECT_EQ(typed.owner, "alice");
  // An id stays an id.
  EXPECT_EQ(parse_ssh_host("0f8e4c1a-2b3c-4d5e-8f90-123456789abc").space,
            "0f8e4c1a-2b3c-4d5e-8f90-123456789abc");
}

TEST(ssh_config, TheBlockIsReplacedInPlaceAndEverythingElseKept) {
  const std::string begin =
      "# >>> bowline: written by `bowline ssh-config --write`; edit outside these lines >>>\n";
  const std::string end = "# <<< bowline <<<\n";
  const std::string mine = "Host work\n  User me\n";
  // Appended once, after what was there.
  const auto first = with_bowline_block(mine, begin + "Host *.bowline\n  User a\n" + end);
  EXPECT_EQ(first, mine + "\n" + begin + "Host *.bowline\n  User a\n" + end);
  // Written again: replaced where it is, the rest untouched.
  const auto around = first + "Host later\n  Port 2222\n";
  const auto second = with_bowline_block(around, begin + "Host *.bowline\n  User b\n" + end);
  EXPECT_EQ(second,
            mine + "\n" + begin + "Host *.bowline\n  User b\n" + end + "Host later\n  Port 2222\n");
  EXPECT_EQ(with_bowline_block("", begin + end), begin + end);
}

TEST(forward, PortPairs) {
  EXPECT_EQ(parse_forward("8000"), (std::pair<unsigned, unsigned>{8000, 8000}));
  EXPECT_EQ(parse_forward("18080:8000"), (std::pair<unsigned, unsigned>{18080, 8000}));
  EXPECT_EQ(parse_forward("0:8000"), (std::pair<unsigned, unsigned>{0, 8000}));
  for (const char* bad : {"", "0", "x", "80:", ":80", "1:2:3", "70000", "-1", "8000:70000"})
    EXPECT_FALSE(parse_forward(bad)) << bad;
}

}  // namespace
}  // namespace bowline::cli
