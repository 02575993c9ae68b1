#include "api/report_cache.hpp"

namespace bowline::api {

ReportCache::ReportCache(const util::Clock& clock, std::int64_t max_age_ms,
                         std::function<nlohmann::json()> make)
    : clock_(clock), max_age_ms_(max_age_ms), make_(std::move(make)) {}

nlohmann::json ReportCache::get(bool fresh) {
  // Held while making: the next caller then gets this report instead of a second check.
  const std::lock_guard lock(mutex_);
  const auto now = clock_.now_unix_ms();
  if (fresh || !report_ || now - made_at_ >= max_age_ms_ || now < made_at_) {
    auto report = make_();
    made_at_ = clock_.now_unix_ms();
    if (report.is_object()) report["checkedAt"] = made_at_;
    report_ = std::move(report);
  }
  return *report_;
}

}  // namespace bowline::api
