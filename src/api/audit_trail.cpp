#include "api/audit_trail.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace bowline::api {

nlohmann::json audit_json(const store::AuditEntry& entry) {
  return {{"id", entry.id},
          {"time", entry.time},
          {"user", entry.username},
          {"peer", entry.peer},
          {"action", entry.action},
          {"space", entry.space_id ? nlohmann::json(*entry.space_id) : nlohmann::json()},
          {"status", entry.status}};
}

AuditTrail::AuditTrail(store::Store& store, const util::Clock& clock, AuditOptions options,
                       std::function<void(const std::string&)> log)
    : store_(store), clock_(clock), options_(std::move(options)), log_(std::move(log)) {}

void AuditTrail::record(store::AuditEntry entry) {
  if (!options_.enabled) return;
  try {
    if (entry.time == 0) entry.time = clock_.now_unix_ms();
    entry = store_.audit().append(entry);
    prune_now_and_then(entry.time);
  } catch (const std::exception& e) {
    log_("bowline server: the audit log could not record " + entry.action + ": " + e.what());
  }
  if (!options_.file.empty()) append_line(entry);
}

// Opened for each line (O_APPEND): a log rotation that moves the file away is followed at the
// next entry without a signal. The file is the operator's, readable by nobody else (0600).
void AuditTrail::append_line(const store::AuditEntry& entry) {
  const auto line =
      audit_json(entry).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(mutex_);
  const int fd = ::open(options_.file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    log_("bowline server: cannot open the audit file " + options_.file.string() + ": " +
         std::strerror(errno));
    return;
  }
  // One write(2) per line: O_APPEND keeps concurrent writers' lines whole.
  const auto wrote = ::write(fd, line.data(), line.size());
  if (wrote != static_cast<ssize_t>(line.size()))
    log_("bowline server: cannot write the audit file " + options_.file.string() + ": " +
         std::strerror(errno));
  ::close(fd);
}

void AuditTrail::prune_now_and_then(std::int64_t now) {
  {
    std::lock_guard lock(mutex_);
    if (now < next_prune_) return;
    next_prune_ = now + 60'000;
  }
  const auto keep_ms = std::chrono::duration_cast<std::chrono::milliseconds>(options_.retention);
  store_.audit().prune(now - keep_ms.count());
}

}  // namespace bowline::api
