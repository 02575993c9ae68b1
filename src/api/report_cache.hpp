// A report that is costly to make (a node check asks libvirt for domain capabilities, runs
// qemu-img, walks the images path; a KubeVirt node asks its API server), kept for a while so
// that a UI polling GET /api/v1/nodes does not make the host work on every request.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>

#include <nlohmann/json.hpp>

#include "util/clock.hpp"

namespace bowline::api {

class ReportCache {
 public:
  // `make` builds the report; it is called again once `max_age_ms` have passed since the last
  // one was made. The report gains "checkedAt" (Unix ms) so readers can see its age.
  ReportCache(const util::Clock& clock, std::int64_t max_age_ms,
              std::function<nlohmann::json()> make);

  // The current report; `fresh`: make a new one now whatever its age. Concurrent callers that
  // find it stale wait for one new report rather than each making their own.
  nlohmann::json get(bool fresh = false);

 private:
  const util::Clock& clock_;
  const std::int64_t max_age_ms_;
  std::function<nlohmann::json()> make_;
  std::mutex mutex_;
  std::optional<nlohmann::json> report_;
  std::int64_t made_at_ = 0;
};

}  // namespace bowline::api
