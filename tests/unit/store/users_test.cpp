#include "store/users.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "store_test_support.hpp"

namespace bowline::store {
namespace {

using ::testing::HasSubstr;

class UserTest : public testing::StoreTest {};

NewUser alice() {
  NewUser user;
  user.username = "alice";
  user.email = "alice@example.org";
  user.timezone = "Europe/Berlin";
  user.service_password_hash = "$6$salt$hash";
  user.password_hash = "$argon2id$placeholder";
  user.ssh_keys = {"ssh-ed25519 AAAA1 alice@laptop", "ssh-rsa AAAA2 alice@desk"};
  user.permissions = {Permission::UseVnc, Permission::UseWebTerminal};
  return user;
}

TEST_F(UserTest, RoundTripsEveryField) {
  auto created = store().users().create(alice());
  EXPECT_GT(created.id, 0);
  EXPECT_EQ(created.created_at, clock_.now_unix_ms());

  close();  // read back through a new connection: nothing comes from memory
  auto read = store().users().get(created.id);
  ASSERT_TRUE(read);
  EXPECT_EQ(read->username, "alice");
  EXPECT_EQ(read->email, "alice@example.org");
  EXPECT_EQ(read->timezone, "Europe/Berlin");
  EXPECT_EQ(read->service_password_hash, "$6$salt$hash");
  EXPECT_FALSE(read->disabled);
  EXPECT_EQ(read->password_hash, "$argon2id$placeholder");
  EXPECT_EQ(read->ssh_keys, alice().ssh_keys);
  EXPECT_EQ(read->permissions, alice().permissions);
  EXPECT_TRUE(read->has(Permission::UseVnc));
  EXPECT_FALSE(read->has(Permission::Admin));
  EXPECT_EQ(read->created_at, created.created_at);

  EXPECT_EQ(store().users().find_by_username("alice")->id, created.id);
  EXPECT_EQ(store().users().find_by_username("bob"), std::nullopt);
  EXPECT_EQ(store().users().get(999), std::nullopt);
}

TEST_F(UserTest, NoServicePasswordIsNotAnEmptyOne) {
  NewUser user;
  user.username = "bob";
  auto bob = store().users().create(user);
  EXPECT_EQ(store().users().get(bob.id)->service_password_hash, std::nullopt);
}

TEST_F(UserTest, DuplicateUsernameIsAClearConflict) {
  store().users().create(alice());
  try {
    store().users().create(alice());
    FAIL() << "two users named alice";
  } catch (const ConflictError& e) {
    EXPECT_STREQ(e.what(), "a user named 'alice' already exists");
  }
  auto bob = make_user("bob");
  bob.username = "alice";
  EXPECT_THROW(store().users().update(bob), ConflictError);
  EXPECT_EQ(store().users().count(), 2);
}

TEST_F(UserTest, ListsByUsername) {
  make_user("carol");
  make_user("alice");
  make_user("bob");
  std::vector<std::string> names;
  for (const auto& user : store().users().list()) names.push_back(user.username);
  EXPECT_EQ(names, (std::vector<std::string>{"alice", "bob", "carol"}));
}

TEST_F(UserTest, UpdatesProfileKeysPermissionsAndPassword) {
  auto user = store().users().create(alice());
  user.email = "a@example.com";
  user.timezone = "UTC";
  user.service_password_hash.reset();
  user.permissions = {Permission::Admin};
  store().users().update(user);
  store().users().set_password_hash(user.id, "new-hash");
  EXPECT_TRUE(store().users().add_ssh_key(user.id, "ssh-ed25519 AAAA3 new"));
  EXPECT_FALSE(store().users().add_ssh_key(user.id, "ssh-ed25519 AAAA3 new")) << "no duplicates";
  EXPECT_TRUE(store().users().remove_ssh_key(user.id, "ssh-ed25519 AAAA1 alice@laptop"));
  EXPECT_FALSE(store().users().remove_ssh_key(user.id, "ssh-ed25519 AAAA1 alice@laptop"));

  auto read = *store().users().get(user.id);
  EXPECT_EQ(read.email, "a@example.com");
  EXPECT_EQ(read.timezone, "UTC");
  EXPECT_EQ(read.service_password_hash, std::nullopt);
  EXPECT_EQ(read.password_hash, "new-hash");
  EXPECT_FALSE(read.disabled);
  store().users().set_disabled(user.id, true);
  EXPECT_TRUE(store().users().get(user.id)->disabled);
  store().users().update(*store().users().get(user.id));  // update() leaves it as it is
  EXPECT_TRUE(store().users().get(user.id)->disabled);
  EXPECT_EQ(read.permissions, (std::set<Permission>{Permission::Admin}));
  EXPECT_EQ(read.ssh_keys,
            (std::vector<std::string>{"ssh-rsa AAAA2 alice@desk", "ssh-ed25519 AAAA3 new"}));

  store().users().set_permissions(user.id, {});
  EXPECT_TRUE(store().users().get(user.id)->permissions.empty());
}

TEST_F(UserTest, ChangingAnUnknownUserIsNotFound) {
  User ghost;
  ghost.id = 42;
  ghost.username = "ghost";
  EXPECT_THROW(store().users().update(ghost), NotFoundError);
  EXPECT_THROW(store().users().set_password_hash(42, "x"), NotFoundError);
  EXPECT_THROW(store().users().add_ssh_key(42, "k"), NotFoundError);
  EXPECT_THROW(store().users().remove(42), NotFoundError);
}

TEST_F(UserTest, PermissionNamesAreTheDocumentedOnes) {
  EXPECT_STREQ(to_string(Permission::Admin), "admin");
  EXPECT_STREQ(to_string(Permission::UseVnc), "use-vnc");
  EXPECT_STREQ(to_string(Permission::UseWebTerminal), "use-web-terminal");
  EXPECT_EQ(parse_permission("use-vnc"), Permission::UseVnc);
  EXPECT_EQ(parse_permission("root"), std::nullopt);
}

TEST_F(UserTest, RemovingAUserTakesTheirTokensButNotWhileTheyOwnSpaces) {
  auto user = make_user("alice");
  store().tokens().create(user.id, "hash-1", "cli");
  auto tmpl = make_template();
  auto space = make_space("box", user.id, tmpl.id);
  try {
    store().users().remove(user.id);
    FAIL() << "removed a user who owns a space";
  } catch (const ConflictError& e) {
    EXPECT_STREQ(e.what(), "user 'alice' still owns 1 space; delete them first");
  }
  store().spaces().remove(space.id);
  store().users().remove(user.id);
  EXPECT_EQ(store().users().get(user.id), std::nullopt);
  EXPECT_EQ(store().tokens().find_by_hash("hash-1"), std::nullopt);
}

TEST_F(UserTest, TokensRoundTripAndAuthenticateRecordsTheUse) {
  auto user = make_user("alice");
  auto token = store().tokens().create(user.id, "0123abcd", "laptop");
  EXPECT_EQ(token.user_id, user.id);
  EXPECT_EQ(token.name, "laptop");
  EXPECT_EQ(token.created_at, clock_.now_unix_ms());
  EXPECT_EQ(token.last_used, std::nullopt);
  EXPECT_EQ(token.expires_at, std::nullopt);

  clock_.advance(5000);
  auto used = store().tokens().authenticate("0123abcd");
  ASSERT_TRUE(used);
  EXPECT_EQ(used->id, token.id);
  EXPECT_EQ(used->last_used, clock_.now_unix_ms());
  EXPECT_EQ(store().tokens().get(token.id)->last_used, clock_.now_unix_ms());
  EXPECT_EQ(store().tokens().authenticate("wrong"), std::nullopt);

  store().tokens().create(user.id, "second", "web");
  auto tokens = store().tokens().list_for_user(user.id);
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0].name, "laptop");
  EXPECT_TRUE(store().tokens().remove(token.id));
  EXPECT_FALSE(store().tokens().remove(token.id));
  EXPECT_EQ(store().tokens().list_for_user(user.id).size(), 1u);
}

TEST_F(UserTest, TouchingATokenSkipsWhileTheWriterIsBusyAndReadsSeeCommits) {
  auto user = make_user("alice");
  const auto token = store().tokens().create(user.id, "abcd", "cli");
  // Committed rows are seen through the reader connection's repositories.
  ASSERT_TRUE(store().read_tokens().find_by_hash("abcd"));
  EXPECT_EQ(store().read_users().get(user.id)->username, "alice");
  std::promise<void> held, release;
  std::thread writer([&] {
    auto guard = store().db().lock();
    held.set_value();
    release.get_future().wait();
  });
  held.get_future().wait();
  EXPECT_FALSE(store().tokens().touch_unless_busy(token.id));
  release.set_value();
  writer.join();
  clock_.advance(1000);
  EXPECT_TRUE(store().tokens().touch_unless_busy(token.id));
  EXPECT_EQ(store().read_tokens().get(token.id)->last_used, clock_.now_unix_ms());
}

TEST_F(UserTest, ExpiredTokensDoNotAuthenticateAndCanBeSweptAway) {
  auto user = make_user("alice");
  store().tokens().create(user.id, "short", "session", clock_.now_unix_ms() + 1000);
  EXPECT_TRUE(store().tokens().authenticate("short"));
  clock_.advance(1000);
  EXPECT_EQ(store().tokens().authenticate("short"), std::nullopt);
  EXPECT_TRUE(store().tokens().find_by_hash("short")->expired(clock_.now_unix_ms()));
  store().tokens().create(user.id, "forever", "cli");
  EXPECT_EQ(store().tokens().remove_expired(), 1);
  EXPECT_TRUE(store().tokens().find_by_hash("forever"));
}

TEST_F(UserTest, TokenErrorsAreClear) {
  auto user = make_user("alice");
  store().tokens().create(user.id, "same", "a");
  EXPECT_THROW(store().tokens().create(user.id, "same", "b"), ConflictError);
  try {
    store().tokens().create(999, "other", "c");
    FAIL() << "token for a missing user";
  } catch (const NotFoundError& e) {
    EXPECT_THAT(e.what(), HasSubstr("no such user"));
  }
}

TEST_F(UserTest, RemovingEveryTokenOfAUserLeavesOthersTokens) {
  auto alice_user = make_user("alice");
  auto bob = make_user("bob");
  store().tokens().create(alice_user.id, "a1", "laptop");
  store().tokens().create(alice_user.id, "a2", "desk", clock_.now_unix_ms() + 1000);
  store().tokens().create(bob.id, "b1", "laptop");
  EXPECT_EQ(store().tokens().remove_for_user(alice_user.id), 2);
  EXPECT_TRUE(store().tokens().list_for_user(alice_user.id).empty());
  EXPECT_EQ(store().tokens().list_for_user(bob.id).size(), 1u);
  EXPECT_EQ(store().tokens().remove_for_user(alice_user.id), 0);
}

}  // namespace
}  // namespace bowline::store
