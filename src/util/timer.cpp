#include "util/timer.hpp"

namespace bowline::util {

Timer::~Timer() = default;

void Timer::sleep_until(TimePoint until) {
  std::mutex mutex;
  std::condition_variable never_notified;
  std::unique_lock lock(mutex);
  while (!wait_until(lock, never_notified, until)) {
  }
}

bool SteadyTimer::wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                             TimePoint until) {
  return cv.wait_until(lock, until) == std::cv_status::timeout;
}

Timer& steady_timer() {
  static SteadyTimer timer;
  return timer;
}

bool ManualTimer::wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                             TimePoint until) {
  if (now() >= until) return true;
  // A short real wait, then a look at the manual time: an advance() needs no registry of
  // waiters, and a notify still ends the wait at once.
  cv.wait_for(lock, std::chrono::milliseconds(5));
  return now() >= until;
}

}  // namespace bowline::util
