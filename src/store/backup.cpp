#include "store/backup.hpp"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "store/errors.hpp"
#include "store/sqlite.hpp"

namespace bowline::store {
namespace {

// O_EXCL: never overwrite what is there (an older backup, or a file somebody else owns).
void create_private_file(const std::filesystem::path& target) {
  int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    throw StoreError("cannot create the backup " + target.string() + ": " + std::strerror(errno));
  ::close(fd);
}

// The whole copy in one step(-1): one read snapshot, so the copy is consistent; in WAL mode a
// reader holds no writer up. BUSY or LOCKED (a checkpoint in the way) are retried.
void copy_pages(sqlite3* from, sqlite3* to, const std::filesystem::path& target) {
  sqlite3_backup* backup = sqlite3_backup_init(to, "main", from, "main");
  if (!backup)
    throw SqliteError("backup to " + target.string(), sqlite3_extended_errcode(to),
                      sqlite3_errmsg(to));
  int rc;
  do {
    rc = sqlite3_backup_step(backup, -1);
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) sqlite3_sleep(50);
  } while (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED);
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) throw SqliteError("backup to " + target.string(), rc, sqlite3_errstr(rc));
}

}  // namespace

void backup_store(const std::filesystem::path& store_file, const std::filesystem::path& target) {
  create_private_file(target);
  sqlite3* to = nullptr;
  try {
    Db source(store_file, {.query_only = true});
    auto guard = source.lock();
    if (sqlite3_open_v2(target.c_str(), &to, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK)
      throw SqliteError("open " + target.string(), sqlite3_extended_errcode(to),
                        sqlite3_errmsg(to));
    copy_pages(source.handle(), to, target);
    if (sqlite3_close(to) != SQLITE_OK)
      throw SqliteError("close " + target.string(), sqlite3_extended_errcode(to),
                        sqlite3_errmsg(to));
  } catch (...) {
    if (to) sqlite3_close(to);
    std::error_code ignored;
    std::filesystem::remove(target, ignored);
    throw;
  }
}

}  // namespace bowline::store
