// /api/v1/users: accounts, web passwords (argon2id), SSH keys and API tokens.
#include <gtest/gtest.h>

#include "api_test_support.hpp"
#include "util/sha512_crypt.hpp"

namespace bowline::api::testing {
namespace {

constexpr const char* kKey =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@laptop";

class UsersTest : public ::testing::Test {
 protected:
  ApiStack stack_;
  HttpClient client_{stack_.port()};
};

TEST_F(UsersTest, AnAdminCreatesAUserWhoGetsAWorkingToken) {
  const auto name = unique("alice");
  const auto r = client_.post("/api/v1/users", stack_.admin_token(),
                              {{"username", name},
                               {"email", "alice@example.org"},
                               {"timezone", "Europe/Berlin"},
                               {"password", "correct horse battery"},
                               {"servicePassword", "s3rvice"},
                               {"sshKeys", {kKey}},
                               {"permissions", {"use-vnc"}}});
  ASSERT_EQ(r.status, 201) << r.body;
  const auto user = r.parsed();
  EXPECT_EQ(user["username"], name);
  EXPECT_EQ(user["email"], "alice@example.org");
  EXPECT_EQ(user["timezone"], "Europe/Berlin");
  EXPECT_EQ(user["sshKeys"], json::array({kKey}));
  EXPECT_EQ(user["permissions"], json::array({"use-vnc"}));
  EXPECT_EQ(user["hasPassword"], true);
  EXPECT_EQ(user["hasServicePassword"], true);
  EXPECT_FALSE(user.contains("servicePassword"));  // never sent back
  const auto token = user["token"].get<std::string>();
  EXPECT_EQ(token.size(), 64u);

  // The web password is stored as argon2id, never as given.
  const auto stored = stack_.store().users().find_by_username(name);
  EXPECT_EQ(stored->password_hash.rfind("$argon2id$", 0), 0u) << stored->password_hash;
  EXPECT_TRUE(verify_password(stored->password_hash, "correct horse battery"));
  EXPECT_FALSE(verify_password(stored->password_hash, "wrong"));

  EXPECT_EQ(client_.get("/api/v1/whoami", token).parsed()["username"], name);
  EXPECT_EQ(client_.get("/api/v1/users/" + name, token).status, 200);

  // A second user of the same name: 409.
  EXPECT_EQ(client_.post("/api/v1/users", stack_.admin_token(), {{"username", name}}).status, 409);
  // The list has both.
  const auto list = client_.get("/api/v1/users", stack_.admin_token()).parsed();
  EXPECT_EQ(list.size(), 2u);
}

TEST_F(UsersTest, InvalidValuesAre422AndMalformedBodies400) {
  const auto& admin = stack_.admin_token();
  EXPECT_EQ(client_.post("/api/v1/users", admin, {{"username", "Bad Name"}}).status, 422);
  EXPECT_EQ(client_.post("/api/v1/users", admin, {{"username", "ok"}, {"email", "nope"}}).status,
            422);
  // Templates paste the address into cloud-init: no line breaks of any kind, no controls.
  for (const char* email : {"a@b\u2028runcmd: [reboot]", "a@b\u0085x", "a@b\nx", "a@b\x01", "a @b"})
    EXPECT_EQ(client_.post("/api/v1/users", admin, {{"username", "ok"}, {"email", email}}).status,
              422)
        << email;
  // Nor anything a shell or YAML reads specially, nor letters beyond ASCII (look-alikes).
  for (const char* email : {"zoë@exämple.org", "a$(id)@x.org", "a'b@x.org", "a;b@x.org"})
    EXPECT_EQ(client_.post("/api/v1/users", admin, {{"username", "ok"}, {"email", email}}).status,
              422)
        << email;
  EXPECT_EQ(client_
                .post("/api/v1/users", admin,
                      {{"username", "okay"}, {"email", "Zoe.O-Brien+dev@mail.example.org"}})
                .status,
            201);
  EXPECT_EQ(
      client_.post("/api/v1/users", admin, {{"username", "ok"}, {"password", "short"}}).status,
      422);
  EXPECT_EQ(
      client_.post("/api/v1/users", admin, {{"username", "ok"}, {"permissions", {"root"}}}).status,
      422);
  EXPECT_EQ(
      client_.post("/api/v1/users", admin, {{"username", "ok"}, {"sshKeys", {"hello"}}}).status,
      422);
  EXPECT_EQ(client_.post("/api/v1/users", admin, json::object()).status, 400);
  EXPECT_EQ(client_.post("/api/v1/users", admin, {{"username", 7}}).status, 400);
  EXPECT_EQ(client_.request("POST", "/api/v1/users", admin, "{not json").status, 400);
  EXPECT_EQ(client_.request("POST", "/api/v1/users", admin, "[1, 2]").status, 400);
  EXPECT_FALSE(stack_.store().users().find_by_username("ok"));
}

TEST_F(UsersTest, KeysTokensAndPatch) {
  const auto name = unique("carol");
  const auto token = stack_.make_user(name);
  const auto base = "/api/v1/users/" + name;

  auto r = client_.post(base + "/keys", token, {{"key", std::string(kKey) + "\n"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.parsed()["sshKeys"], json::array({kKey}));
  EXPECT_EQ(client_.post(base + "/keys", token, {{"key", kKey}}).parsed()["sshKeys"].size(), 1u);
  EXPECT_EQ(client_.post(base + "/keys", token, {{"key", "ssh-rsa !!"}}).status, 422);
  // spec's rule for a key line: base64 that names its own type, no options field.
  EXPECT_EQ(client_.post(base + "/keys", token, {{"key", "ssh-rsa" + std::string(kKey).substr(11)}})
                .status,
            422);
  EXPECT_EQ(client_.post(base + "/keys", token, {{"key", std::string("no-pty ") + kKey}}).status,
            422);
  EXPECT_EQ(client_.post(base + "/keys", token, {{"key", std::string("  ") + kKey + "\n"}})
                .parsed()["sshKeys"]
                .size(),
            1u);  // trimmed: the same key
  r = client_.request("DELETE", base + "/keys", token, json{{"key", kKey}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.parsed()["sshKeys"], json::array());
  EXPECT_EQ(client_.request("DELETE", base + "/keys", token, json{{"key", kKey}}.dump()).status,
            404);

  r = client_.post(base + "/tokens", token, {{"name", "ci"}});
  ASSERT_EQ(r.status, 201) << r.body;
  const auto second = r.parsed()["token"].get<std::string>();
  EXPECT_NE(second, token);
  EXPECT_EQ(client_.get("/api/v1/whoami", second).parsed()["username"], name);

  r = client_.request("PATCH", base, token,
                      json{{"email", "carol@example.org"},
                           {"timezone", "UTC"},
                           {"password", "a long password"},
                           {"servicePassword", "guestpw"}}
                          .dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.parsed()["email"], "carol@example.org");
  EXPECT_EQ(r.parsed()["hasPassword"], true);
  // Only the hash is kept: the clear text is nowhere in the store.
  const auto kept = *stack_.store().users().find_by_username(name)->service_password_hash;
  EXPECT_EQ(util::sha512_crypt("guestpw", kept.substr(3, kept.find('$', 3) - 3)), kept);
  r = client_.request("PATCH", base, token, R"({"servicePassword": null})");
  EXPECT_EQ(r.parsed()["hasServicePassword"], false);

  // Permissions: an admin's to give; the last admin cannot lose them.
  r = client_.request("PATCH", base, stack_.admin_token(), R"({"permissions": ["admin"]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(client_.get("/api/v1/users", token).status, 200);  // now an admin
  EXPECT_EQ(client_.request("PATCH", base, stack_.admin_token(), R"({"permissions": []})").status,
            200);
  EXPECT_EQ(
      client_
          .request("PATCH", "/api/v1/users/admin", stack_.admin_token(), R"({"permissions": []})")
          .status,
      409);
}

}  // namespace
}  // namespace bowline::api::testing
