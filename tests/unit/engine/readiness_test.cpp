#include "engine/readiness.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

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

// A restore truncates the log (QEMU starts again) though the guest did not boot again: what
// was kept before it still counts, after a second suspend too; a cold start forgets it.
TEST(Readiness, WhatWasKeptBeforeARestoreStillCounts) {
  char pattern[] = "/tmp/bowline-readiness.XXXXXX";
  const std::string dir = mkdtemp(pattern);
  const auto log = dir + "/console.log";
  const auto write = [&](const std::string& text) { std::ofstream(log, std::ios::trunc) << text; };
  write(
      "[    1.2] Linux version 6.1\n"
      "Cloud-init v. 22.4.2 finished at Sun, 29 Nov 2026 14:09:41 +0000. Datasource "
      "DataSourceNoCloud [seed=/dev/sr0].  Up 48.80 seconds\n"
      "dev login: ");
  keep_console_before_restore(log);
  write("");  // the restore's QEMU truncated it
  EXPECT_TRUE(read_readiness(log).finished);
  write("\r\ndev login: ");
  keep_console_before_restore(log);  // a second suspend: the first boot is still there
  write("");
  auto r = read_readiness(log);
  EXPECT_TRUE(r.finished);
  EXPECT_NE(r.detail.find("DataSourceNoCloud"), std::string::npos);
  // A small limit keeps only the newest bytes.
  keep_console_before_restore(log, 16);
  EXPECT_LE(std::filesystem::file_size(log + ".kept"), 16u);
  forget_kept_console(log);
  EXPECT_FALSE(read_readiness(log).booted);
  std::filesystem::remove_all(dir);
}

}  // namespace bowline::engine
