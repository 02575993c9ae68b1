// Who a download of the base image cache is charged to. A cached image is shared by every
// space made from its URL, and never removed (overlays use it); the user whose create or disk
// made it download carries its size against their disk quota, so that nobody fills the
// host's cache with URLs of their choosing beyond their quota.
#pragma once

#include <cstdint>
#include <map>
#include <string_view>

#include "store/repository.hpp"

namespace bowline::store {

class DownloadRepository : public Repository {
 public:
  using Repository::Repository;

  // Charges the cache file `file` (`size_bytes`, from `url`) to `user_id`, unless it is
  // charged already (to whoever was first): false then.
  bool charge(std::string_view file, std::string_view url, std::int64_t size_bytes,
              std::int64_t user_id);
  bool charged(std::string_view file);
  std::int64_t bytes_of(std::int64_t user_id);
  std::map<std::int64_t, std::int64_t> bytes_by_user();
};

}  // namespace bowline::store
