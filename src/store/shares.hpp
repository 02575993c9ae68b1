// Spaces shared with users other than their owner, each share with a role: viewer (sees the
// space), user (uses it) or admin (changes it). What each role may do is the API's business
// (api/space_roles.hpp); the store only keeps who has which.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/repository.hpp"

namespace bowline::store {

enum class ShareRole { Viewer, User, Admin };
const char* to_string(ShareRole role);
std::optional<ShareRole> parse_share_role(std::string_view text);

struct Share {
  std::string space_id;
  std::int64_t user_id = 0;
  std::string username;
  ShareRole role = ShareRole::Viewer;
  std::int64_t created_at = 0;
};

class ShareRepository : public Repository {
 public:
  using Repository::Repository;

  // Shares `space_id` with `user_id` as `role`, or changes the role of an existing share.
  void put(std::string_view space_id, std::int64_t user_id, ShareRole role);
  // false: there was no such share.
  bool remove(std::string_view space_id, std::int64_t user_id);
  std::optional<ShareRole> role_of(std::string_view space_id, std::int64_t user_id);
  // The space's shares, by username.
  std::vector<Share> of_space(std::string_view space_id);
  // The shares a user holds, in the order they were made.
  std::vector<Share> of_user(std::int64_t user_id);
  // Every share there is.
  std::vector<Share> all();
};

}  // namespace bowline::store
