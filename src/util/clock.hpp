// The wall clock as a seam: code that stamps times takes a `const Clock&` so tests can pin
// and advance time (ManualClock) instead of sleeping.
#pragma once

#include <atomic>
#include <cstdint>

namespace bowline::util {

struct Clock {
  virtual ~Clock();
  // Milliseconds since the Unix epoch (UTC).
  virtual std::int64_t now_unix_ms() const = 0;
};

// The real wall clock (std::chrono::system_clock).
struct SystemClock final : Clock {
  std::int64_t now_unix_ms() const override;
};

// A clock that moves only when told to; safe to read and move from several threads.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(std::int64_t start_unix_ms = 1'700'000'000'000) : now_(start_unix_ms) {}
  std::int64_t now_unix_ms() const override { return now_.load(); }
  void set(std::int64_t unix_ms) { now_.store(unix_ms); }
  void advance(std::int64_t ms) { now_.fetch_add(ms); }

 private:
  std::atomic<std::int64_t> now_;
};

}  // namespace bowline::util
