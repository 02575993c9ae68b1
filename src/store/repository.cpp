#include "store/repository.hpp"

#include <sqlite3.h>

namespace bowline::store {

bool violates_unique(const SqliteError& error, std::string_view table_column) {
  if (!error.is_unique_violation()) return false;
  std::string_view message = error.what();
  auto at = message.find("constraint failed: ");
  if (at == std::string_view::npos) return false;
  auto columns = message.substr(at + 19);
  columns = columns.substr(0, columns.find(" [in: "));
  // Match whole names only: "spaces.name" must not match "spaces.domain_name".
  for (std::size_t start = 0; start <= columns.size();) {
    auto end = columns.find(", ", start);
    auto item = columns.substr(start, end == std::string_view::npos ? end : end - start);
    if (item == table_column) return true;
    if (end == std::string_view::npos) break;
    start = end + 2;
  }
  return false;
}

bool violates_foreign_key(const SqliteError& error) {
  return error.extended_code() == SQLITE_CONSTRAINT_FOREIGNKEY;
}

}  // namespace bowline::store
