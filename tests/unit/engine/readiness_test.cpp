#include "engine/readiness.hpp"

#include <gtest/gtest.h>

namespace bowline::engine {

TEST(Readiness, NothingOnTheConsoleMeansNotBooted) {
  const auto r = parse_readiness("");
  EXPECT_FALSE(r.booted);
  EXPECT_FALSE(r.finished);
}

TEST(Readiness, CloudInitsFinalLineMeansReady) {
  const auto r = parse_readiness(
      "[    1.2] Linux version 6.1\r\n"
      "cloud-init[512]: Cloud-init v. 22.4.2 running 'modules:final'\r\n"
      "Cloud-init v. 22.4.2 finished at Sun, 29 Nov 2026 14:09:41 +0000. Datasource "
      "DataSourceNoCloud [seed=/dev/sr0].  Up 48.80 seconds\r\n"
      "dev login: ");
  EXPECT_TRUE(r.booted);
  EXPECT_TRUE(r.finished);
  EXPECT_FALSE(r.failed);
  EXPECT_NE(r.detail.find("DataSourceNoCloud"), std::string::npos);
  ASSERT_FALSE(r.last_lines.empty());
  EXPECT_EQ(r.last_lines.back(), "dev login: ");
}

TEST(Readiness, StillRunningIsNotReady) {
  const auto r = parse_readiness("cloud-init[512]: Cloud-init v. 22.4.2 running 'init'\n");
  EXPECT_TRUE(r.booted);
  EXPECT_FALSE(r.finished);
}

TEST(Readiness, ModuleFailuresAreReported) {
  const auto r = parse_readiness(
      "cloud-init[700]: 2026-11-29 ERROR  Failed to run module package-update-upgrade-install\n"
      "Cloud-init v. 22.4.2 finished at today. Datasource DataSourceNoCloud.\n");
  EXPECT_TRUE(r.finished);
  EXPECT_TRUE(r.failed);
}

TEST(Readiness, KeepsOnlyTheTailAndDropsControlCharacters) {
  std::string text;
  for (int i = 0; i < 30; ++i) text += "line " + std::to_string(i) + "\x1b[6n\r\n";
  const auto r = parse_readiness(text, 5);
  ASSERT_EQ(r.last_lines.size(), 5u);
  EXPECT_EQ(r.last_lines.front(), "line 25[6n");
  EXPECT_EQ(r.last_lines.back(), "line 29[6n");
}

TEST(Readiness, AMissingLogIsNotReady) {
  const auto r = read_readiness("/nonexistent/console.log");
  EXPECT_FALSE(r.booted);
}

}  // namespace bowline::engine
