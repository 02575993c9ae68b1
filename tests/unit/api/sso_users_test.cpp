// Who a single sign-on login is, on a real store: the first login makes the user from the
// claims, later ones find them by subject whatever their name says now, groups set the
// permissions at every login, and a local account's name is never taken over.
#include "api/sso_users.hpp"

#include <gtest/gtest.h>

#include "../common/scratch_files.hpp"
#include "api/http.hpp"
#include "util/clock.hpp"

namespace bowline::api {
namespace {

using nlohmann::json;
using store::Permission;

class SsoUsersTest : public ::testing::Test {
 protected:
  SsoUsersTest() {
    policy_.admin_groups = {"ops"};
    policy_.group_permissions["developers"] = {Permission::UseSsh, Permission::UsePorts};
  }
  static json claims(const std::string& sub, const std::string& name, json groups) {
    return {{"sub", sub},
            {"preferred_username", name},
            {"email", name + "@example.org"},
            {"groups", std::move(groups)}};
  }
  int status_of(const json& c) {
    try {
      sso_user(store_, kIssuer, c, policy_);
    } catch (const HttpError& e) {
      return e.status();
    }
    return 0;
  }

  static constexpr const char* kIssuer = "https://id.example";
  test_support::TempDir dir_;
  util::ManualClock clock_;
  store::Store store_{dir_.path() / "bowline.db", clock_};
  SsoPolicy policy_;
};

TEST_F(SsoUsersTest, TheFirstLoginMakesTheUserFromTheClaims) {
  const auto user = sso_user(store_, kIssuer, claims("s-1", "Carol", {"developers"}), policy_);
  EXPECT_EQ(user.username, "carol");
  EXPECT_EQ(user.email, "Carol@example.org");  // as the provider says it
  EXPECT_EQ(user.permissions, (std::set<Permission>{Permission::UseSsh, Permission::UsePorts}));
  EXPECT_TRUE(user.password_hash.empty());  // no password: a local login is impossible
  EXPECT_TRUE(store_.sso_identities().linked(user.id));
}

TEST_F(SsoUsersTest, LaterLoginsFindTheSubjectAndTakeTheGroupsAgain) {
  const auto first = sso_user(store_, kIssuer, claims("s-1", "carol", {"developers"}), policy_);
  const auto renamed = sso_user(store_, kIssuer, claims("s-1", "caroline", {"ops"}), policy_);
  EXPECT_EQ(renamed.id, first.id);
  EXPECT_EQ(renamed.username, "carol");
  EXPECT_EQ(renamed.permissions, std::set<Permission>{Permission::Admin});
  EXPECT_EQ(store_.users().get(first.id)->permissions, std::set<Permission>{Permission::Admin});
  const auto left = sso_user(store_, kIssuer, claims("s-1", "carol", json::array()), policy_);
  EXPECT_TRUE(left.permissions.empty());
}

TEST_F(SsoUsersTest, ALocalAccountIsNeverTakenOver) {
  store::NewUser local;
  local.username = "admin";
  local.password_hash = "x";
  local.permissions = {Permission::Admin};
  store_.users().create(local);
  EXPECT_EQ(status_of(claims("s-9", "admin", {"ops"})), 403);
  EXPECT_EQ(store_.users().find_by_username("admin")->password_hash, "x");
  // Another issuer's subject of the same id is someone else.
  sso_user(store_, kIssuer, claims("s-1", "carol", json::array()), policy_);
  EXPECT_EQ(status_of(claims("s-1", "carol", json::array())), 0);
  EXPECT_THROW(
      sso_user(store_, "https://other.example", claims("s-1", "carol", json::array()), policy_),
      HttpError);
}

TEST_F(SsoUsersTest, NamesBowlineCannotUseAndDisabledUsersAreRefused) {
  EXPECT_EQ(status_of(claims("s-2", "not a name", json::array())), 403);
  EXPECT_EQ(status_of(claims("s-3", "", json::array())), 403);
  const auto user = sso_user(store_, kIssuer, claims("s-4", "dave", json::array()), policy_);
  store_.users().set_disabled(user.id, true);
  EXPECT_EQ(status_of(claims("s-4", "dave", json::array())), 403);
}

}  // namespace
}  // namespace bowline::api
