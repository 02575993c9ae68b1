// bowline admin backup and restore (docs/backup.md): an archive of what a server keeps in its
// data directory, made while it runs, and put back into the data directory of a stopped server
// (this host after a lost disk, or a fresh one).
//
// The archive is a tar (ustar, as space exports are), its members in this order:
//   bowline.db       the store as of one moment (SQLite's online backup API)
//   admin.token, tls-cert.pem, tls-key.pem, guest-guard.tag
//                    the server's own files in its data directory, those that exist
//   settings.txt     the running server's effective settings and where each came from
//   config.yaml      the config file it read, when it read one
//   manifest.json    {"format": "bowline-backup", "version": 1, "createdAt": ms,
//                    "members": [{name, size, sha256}]} for every member before it
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace bowline::server {

class BackupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct BackupSource {
  std::filesystem::path data_dir;  // bowline.db and the server's own files
  std::string settings_text;       // describe_settings() of the running server
  std::optional<std::filesystem::path> config_file;
  std::int64_t now_ms = 0;
};

// Writes the archive to `sink` as it is made. BackupError when the store cannot be copied (the
// copy's temporary file is gone either way).
void write_backup(const BackupSource& source, const std::function<void(std::string_view)>& sink);

struct RestoreOptions {
  std::filesystem::path archive;
  std::filesystem::path data_dir;
  // Restore over a data directory that has a store: what was there is moved aside first.
  bool force = false;
};

struct RestoreReport {
  std::int64_t created_at = 0;  // the backup's
  std::size_t users = 0, templates = 0, spaces = 0;
  std::vector<std::string> members;     // restored, in the archive's order
  std::filesystem::path moved_aside;    // where the data directory's old files went; empty: none
  std::filesystem::path settings_copy;  // the backup's settings.txt (and config.yaml beside it)
};

// Checks every member of the archive against its manifest and the store itself (it must open
// and migrate) in a staging directory, then moves them into `data_dir`. Refused with a
// BackupError, nothing changed, when anything does not match, when the data directory has a
// store and `force` is not set, or while a server uses the data directory.
RestoreReport restore_backup(const RestoreOptions& options);

}  // namespace bowline::server
