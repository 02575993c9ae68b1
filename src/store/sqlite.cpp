#include "store/sqlite.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <utility>

namespace bowline::store {

namespace {

std::string describe(std::string_view step, const std::string& message, const std::string& sql) {
  std::string out = "sqlite: ";
  out += step;
  out += ": ";
  out += message;
  if (!sql.empty()) {
    out += " [in: ";
    out += sql;
    out += "]";
  }
  return out;
}

[[noreturn]] void fail(sqlite3* db, int rc, std::string step, const std::string& sql = {}) {
  std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  int extended = db ? sqlite3_extended_errcode(db) : rc;
  // sqlite3_errmsg describes the most recent failure on the connection; when a later call
  // succeeded in between it says "not an error", so fall back to the code's own text.
  if ((extended & 0xff) != (rc & 0xff)) {
    extended = rc;
    message = sqlite3_errstr(rc);
  }
  throw SqliteError(std::move(step), extended, message, sql);
}

}  // namespace

SqliteError::SqliteError(std::string step, int extended_code, const std::string& message,
                         const std::string& sql)
    : StoreError(describe(step, message, sql)),
      step_(std::move(step)),
      extended_code_(extended_code) {}

bool SqliteError::is_unique_violation() const {
  return extended_code_ == SQLITE_CONSTRAINT_UNIQUE ||
         extended_code_ == SQLITE_CONSTRAINT_PRIMARYKEY;
}

// ---- Statement ----------------------------------------------------------------------------

Statement::Statement(sqlite3* db, std::string_view sql) : db_(db), sql_(sql) {
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql_.data(), static_cast<int>(sql_.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt_, &tail);
  if (rc != SQLITE_OK) fail(db_, rc, "prepare", sql_);
  if (stmt_ == nullptr) throw SqliteError("prepare", SQLITE_MISUSE, "no SQL statement", sql_);
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

void Statement::check_bind(int rc, int index) {
  if (rc != SQLITE_OK) fail(db_, rc, "bind parameter " + std::to_string(index), sql_);
}

Statement& Statement::bind(int index, std::int64_t value) {
  check_bind(sqlite3_bind_int64(stmt_, index, value), index);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  check_bind(sqlite3_bind_double(stmt_, index, value), index);
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  // A default-constructed string_view has data() == nullptr, which SQLite would bind as NULL;
  // an empty string is still a string.
  const char* text = value.data() != nullptr ? value.data() : "";
  check_bind(sqlite3_bind_text64(stmt_, index, text, value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
             index);
  return *this;
}

Statement& Statement::bind(int index, std::nullopt_t) {
  check_bind(sqlite3_bind_null(stmt_, index), index);
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // Take the message before reset() clears it.
  std::string message = sqlite3_errmsg(db_);
  int extended = sqlite3_extended_errcode(db_);
  sqlite3_reset(stmt_);
  throw SqliteError("step", extended, message, sql_);
}

int Statement::run() {
  while (step()) {
  }
  int changed = sqlite3_changes(db_);
  sqlite3_reset(stmt_);
  return changed;
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t Statement::column_int64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

int Statement::column_int(int column) const {
  return sqlite3_column_int(stmt_, column);
}

double Statement::column_double(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::column_text(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::string_view Statement::column_view(int column) const {
  const auto* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return {reinterpret_cast<const char*>(text),
          static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column))};
}

std::optional<std::string> Statement::column_optional_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return column_text(column);
}

std::optional<std::int64_t> Statement::column_optional_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return column_int64(column);
}

// ---- Db -----------------------------------------------------------------------------------

CachedStatement::~CachedStatement() {
  statement_->reset();
  if (in_use_ != nullptr) *in_use_ = false;
}

namespace {

// The database holds password hashes, token hashes and service passwords: its files are the
// server user's alone, whatever the umask was or whoever made an existing file readable.
// SQLite gives the -wal and -shm files the main file's mode when it makes them.
void keep_private(const std::filesystem::path& file) {
  if (!std::filesystem::exists(file)) {
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) ::close(fd);
  }
  for (const auto* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::error_code ec;  // a file we cannot change is the operator's choice: SQLite says more
    std::filesystem::permissions(
        file.string() + suffix,
        std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
        std::filesystem::perm_options::replace, ec);
  }
}

}  // namespace

Db::Db(const std::filesystem::path& file, Options options) : file_(file) {
  if (!options.query_only) keep_private(file);
  int rc =
      sqlite3_open_v2(file.c_str(), &handle_,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = handle_ ? sqlite3_errmsg(handle_) : sqlite3_errstr(rc);
    sqlite3_close_v2(handle_);
    handle_ = nullptr;
    throw SqliteError("open " + file.string(), rc, message);
  }
  sqlite3_extended_result_codes(handle_, 1);
  try {
    sqlite3_busy_timeout(handle_, static_cast<int>(options.busy_timeout.count()));
    // journal_mode answers with the mode it ended up in: WAL is not possible everywhere (some
    // network file systems), and a store that silently ran without it would serialise readers.
    if (auto mode = switch_to_wal(options.busy_timeout); mode != "wal")
      throw SqliteError("set journal_mode=WAL on " + file.string(), SQLITE_ERROR,
                        "the database stayed in journal mode '" + mode + "'");
    exec("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL");
    if (options.query_only) exec("PRAGMA query_only=ON");
  } catch (...) {
    sqlite3_close_v2(handle_);
    throw;
  }
}

Db::~Db() {
  cache_.clear();  // finalize every statement before closing
  sqlite3_close_v2(handle_);
}

void Db::exec(std::string_view sql) {
  auto guard = lock();
  std::string text(sql);
  char* message = nullptr;
  int rc = sqlite3_exec(handle_, text.c_str(), nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string why = message ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw SqliteError("exec", sqlite3_extended_errcode(handle_), why, text);
  }
}

CachedStatement Db::cached(std::string_view sql) {
  auto guard = lock();
  auto [it, inserted] = cache_.try_emplace(std::string(sql));
  Entry& entry = it->second;
  if (inserted) {
    try {
      entry.statement = std::make_unique<Statement>(handle_, sql);
    } catch (...) {
      cache_.erase(it);
      throw;
    }
  }
  if (entry.in_use) {
    // The same SQL is still being stepped further up this thread's stack: use a one-off.
    auto owned = std::make_unique<Statement>(handle_, sql);
    Statement* raw = owned.get();
    return CachedStatement(raw, nullptr, std::move(owned));
  }
  entry.in_use = true;
  entry.statement->reset();
  return CachedStatement(entry.statement.get(), &entry.in_use, nullptr);
}

// Changing the journal mode takes an exclusive lock, and SQLite answers SQLITE_BUSY at once,
// without the busy handler, when two connections opening a new file race for it (each holds a
// shared lock and waiting would deadlock). The loser retries until the busy timeout.
std::string Db::switch_to_wal(std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    try {
      return pragma_text("journal_mode=WAL");
    } catch (const SqliteError& e) {
      if (e.code() != SQLITE_BUSY || std::chrono::steady_clock::now() >= deadline) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string Db::pragma_text(std::string_view name) {
  auto guard = lock();
  Statement statement(handle_, "PRAGMA " + std::string(name));
  if (!statement.step()) return {};
  return statement.column_text(0);
}

std::int64_t Db::pragma_int(std::string_view name) {
  auto guard = lock();
  Statement statement(handle_, "PRAGMA " + std::string(name));
  if (!statement.step()) return 0;
  return statement.column_int64(0);
}

std::int64_t Db::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(handle_);
}

bool Db::in_transaction() const {
  return sqlite3_get_autocommit(handle_) == 0;
}

// ---- Transaction --------------------------------------------------------------------------

Transaction::Transaction(Db& db) : db_(db), lock_(db.lock()) {
  if (db_.in_transaction()) {
    static std::atomic<std::uint64_t> counter{0};
    savepoint_ = "sp" + std::to_string(++counter);
    db_.exec("SAVEPOINT " + savepoint_);
  } else {
    db_.exec("BEGIN IMMEDIATE");
  }
}

Transaction::~Transaction() {
  if (done_) return;
  // A destructor must not throw; a failed rollback leaves SQLite to roll back the outermost
  // transaction by itself when the connection is used next or closed.
  try {
    if (savepoint_.empty()) {
      if (db_.in_transaction()) db_.exec("ROLLBACK");
    } else {
      db_.exec("ROLLBACK TO " + savepoint_ + "; RELEASE " + savepoint_);
    }
  } catch (...) {
  }
}

void Transaction::commit() {
  if (done_) throw StoreError("transaction committed twice");
  db_.exec(savepoint_.empty() ? "COMMIT" : "RELEASE " + savepoint_);
  done_ = true;
}

}  // namespace bowline::store
