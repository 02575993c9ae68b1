// Errors the store throws. Every message is meant to reach a user as it is.
#pragma once

#include <stdexcept>
#include <string>

namespace bowline::store {

// Base of everything the store throws.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// SQLite refused a step. what(): "sqlite: <step>: <sqlite's message> [in: <SQL>]".
class SqliteError : public StoreError {
 public:
  SqliteError(std::string step, int extended_code, const std::string& message,
              const std::string& sql = {});
  const std::string& step() const { return step_; }
  int code() const { return extended_code_ & 0xff; }  // primary result code (SQLITE_BUSY, ...)
  int extended_code() const { return extended_code_; }
  bool is_unique_violation() const;  // UNIQUE or PRIMARY KEY constraint

 private:
  std::string step_;
  int extended_code_;
};

// A name or address is already taken, or an object is still in use
// ("a user named 'alice' already exists").
class ConflictError : public StoreError {
 public:
  using StoreError::StoreError;
};

// The object the caller named does not exist ("no space with id '...'").
class NotFoundError : public StoreError {
 public:
  using StoreError::StoreError;
};

}  // namespace bowline::store
