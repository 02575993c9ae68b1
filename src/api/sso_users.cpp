#include "api/sso_users.hpp"

#include <algorithm>
#include <cctype>

#include "api/http.hpp"
#include "store/errors.hpp"

namespace bowline::api {

namespace {

// The same rule as a username an admin types (routes_users.cpp): it becomes the guest's login.
bool usable(const std::string& name) {
  return !name.empty() && name.size() <= 32 && std::islower(static_cast<unsigned char>(name[0])) &&
         name.back() != '-' && std::all_of(name.begin(), name.end(), [](unsigned char c) {
           return std::islower(c) || std::isdigit(c) || c == '-';
         });
}

std::string text(const nlohmann::json& claims, const std::string& key) {
  const auto it = claims.find(key);
  return it != claims.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::string sso_username(const nlohmann::json& claims, const SsoPolicy& policy) {
  auto name = text(claims, policy.username_claim);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (name.empty())
    throw HttpError(403, "the identity provider sent no " + policy.username_claim +
                             " claim to name your bowline user by");
  if (!usable(name))
    throw HttpError(403, "the identity provider's " + policy.username_claim + " \"" + name +
                             "\" cannot be a bowline username (1 to 32 lower-case letters, "
                             "digits and '-', starting with a letter)");
  return name;
}

std::set<store::Permission> sso_permissions(const nlohmann::json& claims, const SsoPolicy& policy) {
  std::set<store::Permission> out;
  const auto groups = claims.find(policy.groups_claim);
  if (groups == claims.end() || !groups->is_array()) return out;
  for (const auto& group : *groups) {
    if (!group.is_string()) continue;
    const auto name = group.get<std::string>();
    if (policy.admin_groups.contains(name)) out.insert(store::Permission::Admin);
    if (const auto it = policy.group_permissions.find(name); it != policy.group_permissions.end())
      out.insert(it->second.begin(), it->second.end());
  }
  return out;
}

store::User sso_user(store::Store& store, const std::string& issuer, const nlohmann::json& claims,
                     const SsoPolicy& policy) {
  const auto subject = text(claims, "sub");
  const auto permissions = sso_permissions(claims, policy);
  std::optional<store::User> user;
  if (const auto id = store.sso_identities().user_of(issuer, subject))
    user = store.users().get(*id);
  if (!user) {
    const auto name = sso_username(claims, policy);
    if (store.users().find_by_username(name))
      throw HttpError(403, "a bowline account named " + name +
                               " exists already and is not this identity's: an admin renames "
                               "one of them (single sign-on never takes over an account)");
    store::NewUser fresh;
    fresh.username = name;
    fresh.email = text(claims, "email");
    fresh.permissions = permissions;
    try {
      user = store.users().create(fresh);
      store.sso_identities().link(issuer, subject, user->id);
    } catch (const store::ConflictError&) {  // a concurrent first login of the same person
      if (const auto id = store.sso_identities().user_of(issuer, subject))
        user = store.users().get(*id);
      if (!user) throw;
    }
  }
  if (user->disabled) throw HttpError(403, "the account " + user->username + " is disabled");
  if (user->permissions != permissions) {
    store.users().set_permissions(user->id, permissions);
    user->permissions = permissions;
  }
  return *user;
}

}  // namespace bowline::api
