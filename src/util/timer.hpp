// Steady time and waiting as a seam: code that waits for something to happen or for a timeout
// (a guest's shutdown, a cluster's VirtualMachine, a guest's DHCP lease, a console's last
// viewer) takes a Timer, so that tests move time on instead of waiting in real seconds.
// (util::Clock is the wall clock, for time stamps; this is the monotonic one, for waits.)
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace bowline::util {

class Timer {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  virtual ~Timer();
  virtual TimePoint now() const = 0;
  // Waits on `cv` (guarded by `lock`'s mutex, held on entry and on return) until it is
  // notified or the timer reaches `until`; true when it reached it. Like any condition
  // variable wait it may also return early: callers check what they wait for and loop.
  virtual bool wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                          TimePoint until) = 0;
  // Waits until the timer reaches `until`.
  void sleep_until(TimePoint until);
  void sleep_for(std::chrono::milliseconds duration) { sleep_until(now() + duration); }
};

// std::chrono::steady_clock and real waits.
class SteadyTimer final : public Timer {
 public:
  TimePoint now() const override { return std::chrono::steady_clock::now(); }
  bool wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                  TimePoint until) override;
};
// The one SteadyTimer a component uses when it is given none.
Timer& steady_timer();

// Time that moves only when a test says so. A wait ends when it is notified or when advance()
// has moved the time past its end (noticed within a few milliseconds of real time).
class ManualTimer final : public Timer {
 public:
  TimePoint now() const override { return TimePoint(std::chrono::nanoseconds(now_.load())); }
  bool wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                  TimePoint until) override;
  void advance(std::chrono::nanoseconds by) { now_.fetch_add(by.count()); }

 private:
  std::atomic<std::int64_t> now_{std::chrono::nanoseconds(std::chrono::hours(1)).count()};
};

}  // namespace bowline::util
