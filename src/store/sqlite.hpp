// A small RAII layer over SQLite's C API: Db (one connection, WAL, foreign keys, busy
// timeout, a cache of prepared statements), Statement (typed bind/column, reusable) and
// Transaction (BEGIN IMMEDIATE, or a SAVEPOINT when nested; rolls back unless committed).
//
// Threads: a Db is one connection guarded by one recursive mutex. Everything that touches the
// connection holds Db::lock() for its duration; a Transaction holds it from begin to end, so
// other threads wait for the commit instead of seeing half of it. Several Db objects (in this
// or another process) may open the same file: writers then take turns through BEGIN IMMEDIATE
// and the busy timeout.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include "store/errors.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace bowline::store {

class Statement {
 public:
  // Prepares one SQL statement; throws SqliteError naming the SQL when it does not compile.
  Statement(sqlite3* db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Parameters are numbered from 1, as in SQLite. Text is copied (SQLITE_TRANSIENT).
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, std::int64_t{value}); }
  Statement& bind(int index, std::uint32_t value) { return bind(index, std::int64_t{value}); }
  Statement& bind(int index, bool value) { return bind(index, std::int64_t{value ? 1 : 0}); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const std::string& value) {
    return bind(index, std::string_view(value));
  }
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, std::nullopt_t);
  template <class T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind(index, std::nullopt);
  }
  // Binds every argument in order, starting at parameter 1.
  template <class... Args>
  Statement& bind_all(const Args&... args) {
    int index = 0;
    (bind(++index, args), ...);
    return *this;
  }

  // Runs one step: true when a row is ready for column_*(), false when the statement is done.
  bool step();
  // Runs the statement to completion (INSERT, UPDATE, DELETE, DDL); returns the rows changed.
  int run();
  // Back to the start with no bindings, ready for reuse.
  void reset();

  bool is_null(int column) const;
  std::int64_t column_int64(int column) const;
  int column_int(int column) const;
  bool column_bool(int column) const { return column_int64(column) != 0; }
  double column_double(int column) const;
  std::string column_text(int column) const;  // NULL reads as ""
  // The text without a copy: valid until the next step(), reset() or column call on it.
  std::string_view column_view(int column) const;
  std::optional<std::string> column_optional_text(int column) const;
  std::optional<std::int64_t> column_optional_int64(int column) const;

  const std::string& sql() const { return sql_; }

 private:
  void check_bind(int rc, int index);

  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

class Db;

// A statement from Db's cache, reset (and its read snapshot released) when this goes away.
class CachedStatement {
 public:
  Statement& operator*() const { return *statement_; }
  Statement* operator->() const { return statement_; }
  ~CachedStatement();
  CachedStatement(const CachedStatement&) = delete;
  CachedStatement& operator=(const CachedStatement&) = delete;

 private:
  friend class Db;
  CachedStatement(Statement* statement, bool* in_use, std::unique_ptr<Statement> owned)
      : statement_(statement), in_use_(in_use), owned_(std::move(owned)) {}
  Statement* statement_;
  bool* in_use_;                      // the cache entry's flag; nullptr for a one-off
  std::unique_ptr<Statement> owned_;  // a one-off when the cached one was busy
};

class Db {
 public:
  struct Options {
    std::chrono::milliseconds busy_timeout{10'000};
    bool query_only = false;  // refuse every write on this connection (PRAGMA query_only)
  };

  // Opens (creating when missing) the database file and sets journal_mode=WAL,
  // foreign_keys=ON, synchronous=NORMAL and the busy timeout.
  explicit Db(const std::filesystem::path& file) : Db(file, Options{}) {}
  Db(const std::filesystem::path& file, Options options);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Hold this while using the connection (Transaction and CachedStatement users do).
  std::unique_lock<std::recursive_mutex> lock() { return std::unique_lock(mutex_); }
  // The lock when nobody else holds it (owns_lock() says whether it was taken).
  std::unique_lock<std::recursive_mutex> try_lock() {
    return std::unique_lock(mutex_, std::try_to_lock);
  }

  // Runs SQL with no results (may hold several statements).
  void exec(std::string_view sql);
  // A fresh prepared statement.
  Statement prepare(std::string_view sql) { return Statement(handle_, sql); }
  // A prepared statement from the cache, ready to bind (prepared on first use).
  CachedStatement cached(std::string_view sql);

  // PRAGMA name (no argument) read as text / integer.
  std::string pragma_text(std::string_view name);
  std::int64_t pragma_int(std::string_view name);

  std::int64_t last_insert_rowid() const;
  bool in_transaction() const;  // inside BEGIN ... COMMIT
  const std::filesystem::path& file() const { return file_; }
  sqlite3* handle() const { return handle_; }

 private:
  std::string switch_to_wal(std::chrono::milliseconds patience);

  struct Entry {
    std::unique_ptr<Statement> statement;
    bool in_use = false;
  };

  std::filesystem::path file_;
  sqlite3* handle_ = nullptr;
  std::recursive_mutex mutex_;
  std::unordered_map<std::string, Entry> cache_;
};

// BEGIN IMMEDIATE (the write lock is taken now, so the transaction cannot fail later with
// SQLITE_BUSY on upgrade) or, inside another transaction on this connection, a SAVEPOINT.
// Holds Db::lock() until it ends; must end on the thread that began it. Rolls back in the
// destructor unless commit() was called.
class Transaction {
 public:
  explicit Transaction(Db& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  void commit();

 private:
  Db& db_;
  std::unique_lock<std::recursive_mutex> lock_;
  std::string savepoint_;  // empty: the outermost transaction
  bool done_ = false;
};

}  // namespace bowline::store
