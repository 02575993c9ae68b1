// When a suspend may go on after the guest dropped its page cache: QEMU's resident set falls in
// batches (free page reporting) and the watch waits until a batch would have shown.
#include "engine/page_report_watch.hpp"

#include <gtest/gtest.h>

namespace bowline::engine {
namespace {

using std::chrono::milliseconds;

TEST(suspend_page_report_watch, WaitsWhileTheResidentSetFallsInBatches) {
  PageReportWatch watch(milliseconds(3000), 4096);
  const PageReportWatch::TimePoint t0{};
  EXPECT_FALSE(watch.settled(t0, 1'800'000));
  EXPECT_FALSE(watch.settled(t0 + milliseconds(500), 1'800'000));
  // A batch of 256 MiB two seconds in: the quiet time starts again from there.
  EXPECT_FALSE(watch.settled(t0 + milliseconds(2000), 1'540'000));
  EXPECT_FALSE(watch.settled(t0 + milliseconds(4500), 1'540'000));
  EXPECT_FALSE(watch.settled(t0 + milliseconds(4600), 1'280'000));
  // Growth and small wobbles are no batch.
  EXPECT_FALSE(watch.settled(t0 + milliseconds(6000), 1'283'000));
  EXPECT_FALSE(watch.settled(t0 + milliseconds(7000), 1'279'000));
  EXPECT_TRUE(watch.settled(t0 + milliseconds(7600), 1'281'000));
  EXPECT_EQ(watch.freed_kib(), 1'800'000u - 1'280'000u);
}

TEST(suspend_page_report_watch, AResidentSetThatNeverFallsSettlesAfterTheQuietTime) {
  PageReportWatch watch(milliseconds(3000), 4096);
  const PageReportWatch::TimePoint t0{};
  EXPECT_FALSE(watch.settled(t0, 900'000));
  EXPECT_FALSE(watch.settled(t0 + milliseconds(2999), 900'000));
  EXPECT_TRUE(watch.settled(t0 + milliseconds(3000), 900'000));
  EXPECT_EQ(watch.freed_kib(), 0u);
}

}  // namespace
}  // namespace bowline::engine
