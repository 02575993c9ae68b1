// Who a single sign-on login is in bowline: the user linked to the provider's (issuer,
// subject), made at the first login from the claims (a username from a claim, the email), and
// their permissions from their groups at every login (the provider is the source of truth for
// them). A local account of the same name is never taken over: that login is refused.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "store/store.hpp"

namespace bowline::api {

struct SsoPolicy {
  std::string username_claim = "preferred_username";
  std::string groups_claim = "groups";
  std::set<std::string> admin_groups;
  std::map<std::string, std::set<store::Permission>> group_permissions;
};

// The bowline username the claims ask for (lower case); HttpError 403 naming the claim when
// it is missing or not a username bowline can use.
std::string sso_username(const nlohmann::json& claims, const SsoPolicy& policy);
// The permissions the claims' groups give (admin for an admin group).
std::set<store::Permission> sso_permissions(const nlohmann::json& claims, const SsoPolicy& policy);
// The user of this identity, made or updated now. HttpError 403 for a disabled user or a name
// that a local account (or another identity) holds.
store::User sso_user(store::Store& store, const std::string& issuer, const nlohmann::json& claims,
                     const SsoPolicy& policy);

}  // namespace bowline::api
