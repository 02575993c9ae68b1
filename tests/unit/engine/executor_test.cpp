#include "engine/executor.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
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

}  // namespace bowline::engine
