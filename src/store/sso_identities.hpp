// Single sign-on identities: which bowline user an OpenID Connect provider's subject is. The
// pair (issuer, subject) is the provider's stable name for a person; usernames only label them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "store/repository.hpp"

namespace bowline::store {

class SsoIdentityRepository : public Repository {
 public:
  using Repository::Repository;

  // ConflictError when the identity is someone's already; NotFoundError for an unknown user.
  void link(std::string_view issuer, std::string_view subject, std::int64_t user_id);
  std::optional<std::int64_t> user_of(std::string_view issuer, std::string_view subject);
  // Whether the user logs in through single sign-on (has any identity).
  bool linked(std::int64_t user_id);
};

}  // namespace bowline::store
