// bowline admin audit|backup|restore: the server's audit log (docs/audit.md), and its backups
// (docs/backup.md): made through the API while it runs, restored here while it is stopped.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli/app.hpp"
#include "cli/client_format.hpp"
#include "cli/client_verbs.hpp"
#include "cli/output.hpp"
#include "cli/verbs.hpp"
#include "server/backup.hpp"

namespace bowline::cli {
namespace {

struct AuditArgs {
  ClientOptions client;
  std::string user;
  std::string space;  // a name or an id
  std::string since;  // 24h, 7d, 2026-12-06T01:00:00Z or unix ms
  std::string limit;
};

// A live space's name becomes its id; anything else (a deleted space's id) goes as it is.
std::string space_id_of(Client& client, const std::string& space) {
  try {
    return resolve_space(client, space);
  } catch (const CliError& e) {
    if (e.exit_code() != kExitNotFound) throw;
    return space;
  }
}

int audit(const AuditArgs& a) {
  Client client(resolve_endpoint(a.client.server));
  std::string query;
  auto add = [&query](const char* key, const std::string& value) {
    if (!value.empty())
      query += (query.empty() ? "?" : "&") + std::string(key) + "=" + escape_segment(value);
  };
  add("user", a.user);
  add("space", a.space.empty() ? "" : space_id_of(client, a.space));
  add("since", a.since);
  add("limit", a.limit);
  const auto entries = client.get("/api/v1/audit" + query);
  if (a.client.json()) {
    print_json(entries);
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows{{"TIME", "USER", "FROM", "ACTION", "SPACE", "STATUS"}};
  for (const auto& e : entries)
    rows.push_back({format_time(e["time"]), text_of(e, "user", "-"), text_of(e, "peer", "-"),
                    text_of(e, "action"), text_of(e, "space", "-"),
                    std::to_string(e.value("status", 0))});
  std::cout << format_table(rows);
  return kExitOk;
}

struct BackupArgs {
  ClientOptions client;
  std::string file;
  std::string data_dir;
  bool force = false;
};

// The archive goes to FILE.part (0600) and is renamed at the end: a failed backup leaves no
// file that looks like one, and an existing FILE is never overwritten.
int backup(const BackupArgs& a) {
  namespace fs = std::filesystem;
  if (fs::exists(a.file)) throw CliError(kExitInvalid, a.file + " exists; name a new file");
  Client client(resolve_endpoint(a.client.server));
  client.set_timeout(std::chrono::hours(1));
  const auto archive = client.get_bytes("/api/v1/backup");
  const auto part = a.file + ".part";
  const int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw CliError(kExitInvalid, "cannot create " + part + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < archive.size()) {
    const auto n = ::write(fd, archive.data() + done, archive.size() - done);
    if (n <= 0 && errno != EINTR) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      ::unlink(part.c_str());
      throw CliError(kExitInvalid, "cannot write " + part + ": " + why);
    }
    if (n > 0) done += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced || ::rename(part.c_str(), a.file.c_str()) != 0) {
    ::unlink(part.c_str());
    throw CliError(kExitInvalid, "cannot finish " + a.file + ": " + std::strerror(errno));
  }
  std::cerr << "backup written to " << a.file << " (" << archive.size() << " bytes, mode 0600)\n";
  return kExitOk;
}

int restore(const BackupArgs& a) {
  server::RestoreOptions options;
  options.archive = a.file;
  options.data_dir = a.data_dir;
  options.force = a.force;
  server::RestoreReport report;
  try {
    report = server::restore_backup(options);
  } catch (const std::exception& e) {
    throw CliError(kExitInvalid, e.what());
  }
  if (!report.moved_aside.empty())
    std::cout << "the data directory's earlier store and files: " << report.moved_aside.string()
              << "\n";
  std::cout << "restored into " << a.data_dir << ": " << report.users << " users, "
            << report.templates << " templates, " << report.spaces << " spaces (backup of "
            << format_time(ojson(report.created_at)) << ")\n";
  if (!report.settings_copy.empty())
    std::cout << "the backed-up server's settings: " << report.settings_copy.string()
              << " (settings are not applied: start the server with them as you choose)\n";
  std::cout << "start the server: spaces whose domains and disks are on this host come back; "
               "the others show as error with the reason\n";
  return kExitOk;
}

std::string default_data_dir() {
  const char* env = std::getenv("BOWLINE_DATA_DIR");
  return env && *env ? env : "/var/lib/bowline";
}

void add_backup_verbs(CLI::App& group, int& exit_code) {
  {
    auto a = std::make_shared<BackupArgs>();
    auto* cmd = group.add_subcommand(
        "backup", "Save the server's store, keys and settings to FILE (0600) while it runs");
    cmd->add_option("FILE", a->file, "The archive to write (a new file)")->required();
    add_client_options(*cmd, a->client);
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return backup(*a); }); });
  }
  {
    auto a = std::make_shared<BackupArgs>();
    auto* cmd = group.add_subcommand(
        "restore", "Put a backup into a stopped server's data directory (on this host)");
    cmd->add_option("FILE", a->file, "An archive of admin backup")->required();
    a->data_dir = default_data_dir();
    cmd->add_option("--data-dir", a->data_dir, "The server's data directory")
        ->type_name("DIR")
        ->capture_default_str();
    cmd->add_flag("--force", a->force,
                  "Restore over a store that is there (moved aside to before-restore-TIME/)");
    cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return restore(*a); }); });
  }
}

}  // namespace

void add_admin_verbs(CLI::App& app, int& exit_code) {
  auto* group = app.add_subcommand(
      "admin", "The server's own records, for admins: the audit log, backup and restore");
  group->require_subcommand(1);
  add_backup_verbs(*group, exit_code);
  auto a = std::make_shared<AuditArgs>();
  auto* cmd = group->add_subcommand(
      "audit", "Who did what: requests that changed state and sockets opened into spaces");
  cmd->add_option("--user", a->user, "Only this user's")->type_name("USERNAME");
  cmd->add_option("--space", a->space, "Only those on this space (name or id)")->type_name("SPACE");
  cmd->add_option("--since", a->since, "Only those since: an age (24h, 7d) or a UTC time")
      ->type_name("TIME");
  cmd->add_option("--limit", a->limit, "The newest this many (default 1000)")->type_name("N");
  add_client_options(*cmd, a->client);
  cmd->callback([a, &exit_code] { run_client_verb(exit_code, [&] { return audit(*a); }); });
}

}  // namespace bowline::cli
