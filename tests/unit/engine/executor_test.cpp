#include "engine/executor.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace bowline::engine {

TEST(Executor, TasksOfOneKeyRunInOrderOneAtATime) {
  Executor executor(4);
  std::vector<int> seen;
  std::atomic<int> inside{0};
  bool overlapped = false;
  for (int i = 0; i < 50; ++i)
    executor.submit("space-1", [&, i] {
      if (++inside > 1) overlapped = true;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      seen.push_back(i);
      --inside;
    });
  executor.drain();
  EXPECT_FALSE(overlapped);
  ASSERT_EQ(seen.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)], i);
}

TEST(Executor, DifferentKeysRunInParallel) {
  Executor executor(2);
  std::atomic<int> inside{0}, most{0};
  for (int i = 0; i < 2; ++i)
    executor.submit("space-" + std::to_string(i), [&] {
      const int now = ++inside;
      most = std::max(most.load(), now);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      --inside;
    });
  executor.drain();
  EXPECT_EQ(most, 2);
}

TEST(Executor, AThrowingTaskDoesNotStopTheWorker) {
  Executor executor(1);
  bool ran = false;
  executor.submit("k", [] { throw std::runtime_error("boom"); });
  executor.submit("k", [&] { ran = true; });
  executor.drain();
  EXPECT_TRUE(ran);
}

// Four spaces whose operations hang (a guest that never answers) hold four workers: a fifth
// space's operation still runs at once, on a worker of its own.
TEST(security_executor, FourStuckKeysDoNotStopAFifth) {
  Executor executor(4, 16);
  std::promise<void> release;
  const auto released = release.get_future().share();
  std::atomic<int> stuck{0};
  for (int i = 0; i < 4; ++i)
    executor.submit("stuck-" + std::to_string(i), [&, released] {
      ++stuck;
      released.wait();
    });
  while (stuck < 4) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::promise<void> fifth;
  executor.submit("fifth", [&] { fifth.set_value(); });
  EXPECT_EQ(fifth.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready)
      << "the fifth key waited for the stuck ones";
  EXPECT_EQ(executor.workers(), 5u);
  // A second task of a stuck key waits for its own key, not for a new worker.
  std::atomic<bool> second_ran{false};
  executor.submit("stuck-0", [&] { second_ran = true; });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(second_ran);
  EXPECT_EQ(executor.workers(), 5u);
  release.set_value();
  executor.drain();
  EXPECT_TRUE(second_ran);
}

// The control: a fixed pool of four makes the fifth wait, which is what the cap prevents.
TEST(security_executor, AFixedPoolMakesTheFifthWait) {
  Executor executor(4);
  std::promise<void> release;
  const auto released = release.get_future().share();
  std::atomic<int> stuck{0};
  for (int i = 0; i < 4; ++i)
    executor.submit("stuck-" + std::to_string(i), [&, released] {
      ++stuck;
      released.wait();
    });
  while (stuck < 4) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::atomic<bool> fifth{false};
  executor.submit("fifth", [&] { fifth = true; });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(fifth);
  release.set_value();
  executor.drain();
  EXPECT_TRUE(fifth);
  EXPECT_EQ(executor.workers(), 4u);
}

// Up to the cap and no further: beyond it keys wait for a worker as before.
TEST(security_executor, GrowsNoFurtherThanTheCap) {
  Executor executor(1, 3);
  std::promise<void> release;
  const auto released = release.get_future().share();
  std::atomic<int> started{0};
  for (int i = 0; i < 6; ++i)
    executor.submit("k" + std::to_string(i), [&, released] {
      ++started;
      released.wait();
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(started, 3);
  EXPECT_EQ(executor.workers(), 3u);
  release.set_value();
  executor.drain();
  EXPECT_EQ(started, 6);
}

}  // namespace bowline::engine
