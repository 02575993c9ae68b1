// GET /api/v1/backup: the server's backup archive, for admins (docs/backup.md).
#include <ctime>

#include "api/api.hpp"

namespace bowline::api {
namespace {

std::string archive_name(std::int64_t now_ms) {
  const std::time_t t = static_cast<std::time_t>(now_ms / 1000);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char text[64];
  std::strftime(text, sizeof text, "bowline-backup-%Y%m%dT%H%M%SZ.tar", &tm);
  return text;
}

}  // namespace

void Api::add_backup_route() {
  router_.add("GET", "/api/v1/backup", Access::Admin, [this](const Caller&, const Request&) {
    if (!options_.backup) throw HttpError(404, "this server makes no backups through its API");
    // Off the HTTP workers: copying a large store takes a while. The archive is held in memory
    // until it is sent (the store, a few keys and the settings: megabytes, not disks).
    return Response::deferred([this] {
      Response response;
      response.content_type = "application/x-tar";
      options_.backup([&response](std::string_view piece) { response.body.append(piece); });
      const auto now = (options_.clock ? *options_.clock : system_clock_).now_unix_ms();
      response.headers.emplace_back("Content-Disposition",
                                    "attachment; filename=\"" + archive_name(now) + "\"");
      response.headers.emplace_back("Cache-Control", "no-store");
      return response;
    });
  });
}

}  // namespace bowline::api
