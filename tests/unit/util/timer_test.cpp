// The waiting seam: a manual timer's waits end when the test moves time past them (or on a
// notify), the steady timer's in real time.
#include "util/timer.hpp"

#include <gtest/gtest.h>

#include <future>
#include <thread>

namespace bowline::util {
namespace {

using namespace std::chrono_literals;

TEST(ManualTimer, AWaitEndsWhenTimeIsMovedPastIt) {
  ManualTimer timer;
  const auto start = timer.now();
  auto slept = std::async(std::launch::async, [&] { timer.sleep_until(start + 60s); });
  EXPECT_EQ(slept.wait_for(50ms), std::future_status::timeout) << "the time has not moved";
  timer.advance(59s);
  EXPECT_EQ(slept.wait_for(50ms), std::future_status::timeout) << "a second is left";
  timer.advance(1s);
  EXPECT_EQ(slept.wait_for(2s), std::future_status::ready);
  EXPECT_EQ(timer.now() - start, 60s);
}

TEST(ManualTimer, ANotifyEndsAWaitEarly) {
  ManualTimer timer;
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
  auto waited = std::async(std::launch::async, [&] {
    std::unique_lock lock(mutex);
    while (!done)
      if (timer.wait_until(lock, cv, timer.now() + 1h)) return false;
    return true;
  });
  {
    std::lock_guard lock(mutex);
    done = true;
  }
  cv.notify_all();
  ASSERT_EQ(waited.wait_for(2s), std::future_status::ready);
  EXPECT_TRUE(waited.get()) << "woken by the notify, not by the time";
}

TEST(SteadyTimer, WaitsInRealTime) {
  auto& timer = steady_timer();
  const auto start = std::chrono::steady_clock::now();
  timer.sleep_for(20ms);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
}

}  // namespace
}  // namespace bowline::util
