#include "store/downloads.hpp"

namespace bowline::store {

bool DownloadRepository::charge(std::string_view file, std::string_view url,
                                std::int64_t size_bytes, std::int64_t user_id) {
  auto guard = db_.lock();
  return db_.cached(
                "INSERT OR IGNORE INTO downloads (file, url, size_bytes, user_id, created_at) "
                "VALUES (?, ?, ?, ?, ?)")
             ->bind_all(file, url, size_bytes, user_id, now())
             .run() > 0;
}

bool DownloadRepository::charged(std::string_view file) {
  auto guard = db_.lock();
  auto select = db_.cached("SELECT 1 FROM downloads WHERE file = ?");
  select->bind_all(file);
  return select->step();
}

std::int64_t DownloadRepository::bytes_of(std::int64_t user_id) {
  auto guard = db_.lock();
  auto select = db_.cached("SELECT coalesce(sum(size_bytes), 0) FROM downloads WHERE user_id = ?");
  select->bind_all(user_id);
  return select->step() ? select->column_int64(0) : 0;
}

std::map<std::int64_t, std::int64_t> DownloadRepository::bytes_by_user() {
  auto guard = db_.lock();
  auto select = db_.cached(
      "SELECT user_id, sum(size_bytes) FROM downloads WHERE user_id IS NOT NULL GROUP BY user_id");
  std::map<std::int64_t, std::int64_t> out;
  while (select->step()) out[select->column_int64(0)] = select->column_int64(1);
  return out;
}

}  // namespace bowline::store
