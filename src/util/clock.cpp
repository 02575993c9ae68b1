#include "util/clock.hpp"

#include <chrono>

namespace bowline::util {

Clock::~Clock() = default;

std::int64_t SystemClock::now_unix_ms() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace bowline::util
