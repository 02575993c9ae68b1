// The audit trail (docs/audit.md): every request that changes state and every socket opened
// into a space, recorded in the store's append-only audit_log and, when a file is set, as one
// JSON line each for a log shipper. Entries older than the retention are pruned as new ones
// arrive, at most once a minute.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "store/store.hpp"
#include "util/clock.hpp"

namespace bowline::api {

struct AuditOptions {
  bool enabled = true;
  std::filesystem::path file;  // empty: the store only
  std::chrono::hours retention{24 * 90};
};

class AuditTrail {
 public:
  // `log` hears of entries that could not be written (the request itself goes on).
  AuditTrail(store::Store& store, const util::Clock& clock, AuditOptions options,
             std::function<void(const std::string&)> log);

  bool enabled() const { return options_.enabled; }
  // Never throws.
  void record(store::AuditEntry entry);

 private:
  void append_line(const store::AuditEntry& entry);
  void prune_now_and_then(std::int64_t now);

  store::Store& store_;
  const util::Clock& clock_;
  AuditOptions options_;
  std::function<void(const std::string&)> log_;
  std::mutex mutex_;  // the file's lines and the pruning's schedule
  std::int64_t next_prune_ = 0;
};

// An entry as the API and the JSON-lines file show it.
nlohmann::json audit_json(const store::AuditEntry& entry);

}  // namespace bowline::api
