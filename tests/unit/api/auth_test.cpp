// Authentication on every route, and who may do what: 401 without a valid token, 403 for
// admin-only routes and other users' accounts, 404 for other users' spaces.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "api_test_support.hpp"

namespace bowline::api::testing {
namespace {

// A concrete path for a route pattern.
std::string concrete(const std::string& pattern) {
  std::string out = pattern;
  for (const auto& [param, value] : std::vector<std::pair<std::string, std::string>>{
           {"{id}", "1"}, {"{name}", "dev"}, {"{username}", "admin"}})
    if (auto at = out.find(param); at != std::string::npos) out.replace(at, param.size(), value);
  return out;
}

class AuthTest : public ::testing::Test {
 protected:
  ApiStack stack_;
};

TEST_F(AuthTest, EveryRouteRefusesMissingAndBadTokens) {
  const auto& routes = stack_.api().router().routes();
  ASSERT_GE(routes.size(), 24u);  // the table of docs/api.md

  // An expired token and a well-formed but unknown one.
  const auto admin = stack_.store().users().find_by_username("admin");
  const auto expired = new_token();
  stack_.store().tokens().create(admin->id, token_hash(expired), "old", 1);
  const std::vector<std::pair<std::string, std::vector<std::string>>> attempts{
      {"no header", {}},
      {"unknown token", {"Authorization: Bearer " + new_token()}},
      {"expired token", {"Authorization: Bearer " + expired}},
      {"malformed token", {"Authorization: Bearer not-a-token"}},
      {"other scheme", {"Authorization: Basic YWRtaW46YWRtaW4="}},
      {"token without scheme", {"Authorization: " + stack_.admin_token()}},
  };
  HttpClient client(stack_.port());
  for (const auto& route : routes) {
    if (route.access == Access::Public) continue;  // logging in: access_test.cpp
    for (const auto& [what, headers] : attempts) {
      const auto body = route.method == "GET" || route.method == "DELETE" ? "" : "{}";
      const auto r = client.request(route.method, concrete(route.pattern), "", body, headers);
      EXPECT_EQ(r.status, 401) << route.method << " " << route.pattern << " with " << what;
      EXPECT_EQ(r.header("www-authenticate"), "Bearer") << route.pattern;
      EXPECT_TRUE(r.parsed().contains("error")) << r.body;
    }
    // And the real token gets past authentication.
    const auto body = route.method == "GET" || route.method == "DELETE" ? "" : "{}";
    if (route.pattern == "/api/v1/events") continue;  // an endless answer: tested elsewhere
    const auto r =
        client.request(route.method, concrete(route.pattern), stack_.admin_token(), body);
    EXPECT_NE(r.status, 401) << route.method << " " << route.pattern;
  }
  // An unknown path under the API also wants a token first.
  EXPECT_EQ(client.get("/api/v1/nothing-here", "").status, 401);
  EXPECT_EQ(client.get("/api/v1/nothing-here", stack_.admin_token()).status, 404);
}

// Authentication reads on the store's reader connection: a request does not wait for a
// write in progress on the writer (an engine transaction), and last_used is written later.
TEST_F(AuthTest, ARequestIsAnsweredWhileTheWriterIsBusy) {
  const auto token = stack_.make_user("walter");
  auto& tokens = stack_.store().tokens();
  const auto id = tokens.find_by_hash(token_hash(token))->id;
  std::promise<void> held, release;
  std::atomic<bool> released{false};
  std::thread writer([&] {
    auto transaction = stack_.store().transaction();
    held.set_value();
    release.get_future().wait_for(std::chrono::seconds(20));
    released = true;
  });
  held.get_future().wait();
  HttpClient client(stack_.port());
  const auto r = client.get("/api/v1/whoami", token);
  const bool answered_while_held = !released;
  release.set_value();
  writer.join();
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.parsed()["username"], "walter");
  EXPECT_TRUE(answered_while_held) << "the request waited for the writer";
  EXPECT_EQ(tokens.get(id)->last_used, std::nullopt) << "not written while the writer was busy";
  // With the writer free, the next request records the use.
  EXPECT_EQ(client.get("/api/v1/whoami", token).status, 200);
  EXPECT_TRUE(tokens.get(id)->last_used);
}

TEST_F(AuthTest, TheEventStreamRefusesABadToken) {
  SseStream none(stack_.port(), "", "/api/v1/events");
  EXPECT_EQ(none.status(), 401);
  SseStream bad(stack_.port(), new_token(), "/api/v1/events");
  EXPECT_EQ(bad.status(), 401);
}

TEST_F(AuthTest, TheTokenFileHoldsTheFirstAdminsToken) {
  std::ifstream in(stack_.dir() / "admin.token");
  std::string token;
  in >> token;
  EXPECT_EQ(token, stack_.admin_token());
  EXPECT_EQ(std::filesystem::status(stack_.dir() / "admin.token").permissions(),
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  // Only the hash is in the store.
  EXPECT_FALSE(stack_.store().tokens().find_by_hash(token));
  EXPECT_TRUE(stack_.store().tokens().find_by_hash(token_hash(token)));
  // A second bootstrap on a store with users does nothing.
  EXPECT_FALSE(server::bootstrap_admin(stack_.store(), stack_.dir() / "again.token"));
  EXPECT_FALSE(std::filesystem::exists(stack_.dir() / "again.token"));

  HttpClient client(stack_.port());
  const auto me = client.get("/api/v1/whoami", token);
  ASSERT_EQ(me.status, 200) << me.body;
  EXPECT_EQ(me.parsed()["username"], "admin");
  EXPECT_EQ(me.parsed()["permissions"], json::array({"admin"}));
}

TEST_F(AuthTest, AdminOnlyRoutesAnswer403ToUsers) {
  const auto bob = stack_.make_user(unique("bob"));
  HttpClient client(stack_.port());
  EXPECT_EQ(client.get("/api/v1/users", bob).status, 403);
  EXPECT_EQ(client.post("/api/v1/users", bob, {{"username", "mallory"}}).status, 403);
  EXPECT_EQ(
      client.post("/api/v1/templates", bob, {{"name", "t"}, {"yaml", bridged_template()}}).status,
      403);
  EXPECT_EQ(client.request("PUT", "/api/v1/templates/t", bob, R"({"yaml": "x"})").status, 403);
  EXPECT_EQ(client.request("DELETE", "/api/v1/templates/t", bob).status, 403);
  EXPECT_EQ(client.get("/api/v1/spaces?all=1", bob).status, 403);
  // Another user's account: 403; one's own: fine, except one's own permissions.
  EXPECT_EQ(client.get("/api/v1/users/admin", bob).status, 403);
  EXPECT_EQ(client.request("PATCH", "/api/v1/users/admin", bob, R"({"email": "x@y"})").status, 403);
  EXPECT_EQ(client.post("/api/v1/users/admin/tokens", bob, {{"name", "steal"}}).status, 403);
  const auto me = client.get("/api/v1/whoami", bob).parsed();
  const std::string self = "/api/v1/users/" + me["username"].get<std::string>();
  EXPECT_EQ(client.get(self, bob).status, 200);
  EXPECT_EQ(client.request("PATCH", self, bob, R"({"permissions": ["admin"]})").status, 403);
  EXPECT_EQ(client.get("/api/v1/whoami", bob).parsed()["permissions"], json::array());
  // Things any user may do.
  EXPECT_EQ(client.get("/api/v1/templates", bob).status, 200);
  EXPECT_EQ(client.get("/api/v1/nodes", bob).status, 200);
  EXPECT_EQ(client.get("/metrics", bob).status, 200);
}

TEST_F(AuthTest, AnotherUsersSpaceDoesNotExist) {
  HttpClient client(stack_.port());
  ASSERT_EQ(client
                .post("/api/v1/templates", stack_.admin_token(),
                      {{"name", "dev"}, {"yaml", bridged_template()}})
                .status,
            201);
  const auto alice = stack_.make_user(unique("alice"));
  const auto bob = stack_.make_user(unique("bob"));
  const auto created = client.post("/api/v1/spaces", alice,
                                   {{"template", "dev"}, {"name", "box"}, {"start", false}});
  ASSERT_EQ(created.status, 202) << created.body;
  const auto id = created.parsed()["space"]["id"].get<std::string>();
  const auto op = created.parsed()["operation"]["id"].get<std::int64_t>();
  stack_.wait_operation(op, alice);

  const auto path = "/api/v1/spaces/" + id;
  const auto foreign = client.get(path, bob);
  EXPECT_EQ(foreign.status, 404);
  // The same answer as for an id that does not exist at all.
  EXPECT_EQ(foreign.parsed()["error"], client.get("/api/v1/spaces/" + id, bob).parsed()["error"]);
  EXPECT_EQ(client.get("/api/v1/spaces/no-such-id", bob).status, 404);
  for (const auto* verb : {"/start", "/stop", "/restart"})
    EXPECT_EQ(client.post(path + verb, bob, json::object()).status, 404) << verb;
  EXPECT_EQ(client.request("PUT", path + "/ip", bob, R"({"ip": "198.51.100.50"})").status, 404);
  EXPECT_EQ(client.request("DELETE", path, bob).status, 404);
  EXPECT_EQ(client.get("/api/v1/operations/" + std::to_string(op), bob).status, 404);
  EXPECT_EQ(client.get("/api/v1/spaces", bob).parsed(), json::array());
  // A user may not create a space for someone else.
  EXPECT_EQ(client
                .post("/api/v1/spaces", bob,
                      {{"template", "dev"}, {"name", "x"}, {"owner", "admin"}, {"start", false}})
                .status,
            403);

  // The owner and an admin see it.
  EXPECT_EQ(client.get(path, alice).status, 200);
  EXPECT_EQ(client.get(path, stack_.admin_token()).status, 200);
  EXPECT_EQ(client.get("/api/v1/operations/" + std::to_string(op), alice).status, 200);
  const auto all = client.get("/api/v1/spaces?all=1", stack_.admin_token()).parsed();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0]["id"], id);
  // An admin's own list holds only the admin's spaces.
  EXPECT_EQ(client.get("/api/v1/spaces", stack_.admin_token()).parsed(), json::array());
}

}  // namespace
}  // namespace bowline::api::testing
