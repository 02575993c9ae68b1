// /api/v1/pools through the engine on libvirt's test driver: admins make and delete pools, a
// bridged template is refused with the reason, anyone may claim, and the pool refills.
#include <gtest/gtest.h>

#include "api_test_support.hpp"

namespace bowline::api::testing {
namespace {

std::string nat_template() {
  return "name: ${{ .user.username }}-${{ .space.name }}\nimage: base\nmemory: 256M\n"
         "network:\n  mode: nat\n  bridge: default\n";
}

class PoolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = client_.post("/api/v1/templates", stack_.admin_token(),
                          {{"name", "nat"}, {"yaml", nat_template()}});
    ASSERT_EQ(r.status, 201) << r.body;
    r = client_.post("/api/v1/templates", stack_.admin_token(),
                     {{"name", "bridged"}, {"yaml", bridged_template()}});
    ASSERT_EQ(r.status, 201) << r.body;
  }

  json pool(const std::string& name, const std::string& token) {
    auto r = client_.get("/api/v1/pools/" + name, token);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.parsed();
  }

  ApiStack stack_;
  HttpClient client_{stack_.port()};
};

TEST_F(PoolsTest, OnlyAdminsMakePoolsAndABridgedTemplateIsRefusedWithTheReason) {
  const auto bob = stack_.make_user(unique("bob"));
  auto r = client_.post("/api/v1/pools", bob, {{"name", "p"}, {"template", "nat"}, {"size", 1}});
  EXPECT_EQ(r.status, 403) << r.body;

  r = client_.post("/api/v1/pools", stack_.admin_token(),
                   {{"name", "p"}, {"template", "bridged"}, {"size", 1}});
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_NE(r.parsed()["error"].get<std::string>().find("bridged"), std::string::npos) << r.body;

  r = client_.post("/api/v1/pools", stack_.admin_token(),
                   {{"name", "p"}, {"template", "nat"}, {"size", "two"}});
  EXPECT_EQ(r.status, 400) << r.body;
  r = client_.post("/api/v1/pools", stack_.admin_token(),
                   {{"name", "p"}, {"template", "nope"}, {"size", 1}});
  EXPECT_EQ(r.status, 404) << r.body;
  r = client_.post("/api/v1/pools", stack_.admin_token(),
                   {{"name", "p"}, {"template", "nat"}, {"size", 1}, {"node", "cluster"}});
  EXPECT_EQ(r.status, 422) << r.body;
  EXPECT_NE(r.body.find("pools run on the local libvirt node only"), std::string::npos) << r.body;
  EXPECT_TRUE(client_.get("/api/v1/pools", bob).parsed().empty());
}

// Pools stay NAT-only: editing a pool's template into a bridged one is refused with the reason,
// and the template is unchanged.
TEST_F(PoolsTest, APoolsTemplateCannotBecomeBridged) {
  auto r = client_.post("/api/v1/pools", stack_.admin_token(),
                        {{"name", "warm"}, {"template", "nat"}, {"size", 0}});
  ASSERT_EQ(r.status, 201) << r.body;
  const auto before = client_.get("/api/v1/templates/nat", stack_.admin_token()).parsed();
  r = client_.request("PUT", "/api/v1/templates/nat", stack_.admin_token(),
                      json{{"yaml", bridged_template()}}.dump());
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.body.find("pool warm uses template nat"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("pools take NAT templates"), std::string::npos) << r.body;
  const auto after = client_.get("/api/v1/templates/nat", stack_.admin_token()).parsed();
  EXPECT_EQ(after["yaml"], before["yaml"]);
  EXPECT_EQ(after["revision"], before["revision"]);
  // Another NAT revision is fine; so is a bridged template nobody's pool uses.
  r = client_.request("PUT", "/api/v1/templates/nat", stack_.admin_token(),
                      json{{"yaml", nat_template() + "cpus: 2\n"}}.dump());
  EXPECT_EQ(r.status, 200) << r.body;
  r = client_.request("PUT", "/api/v1/templates/bridged", stack_.admin_token(),
                      json{{"yaml", bridged_template() + "display: true\n"}}.dump());
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(PoolsTest, AClaimHandsOutAMemberAndThePoolRefills) {
  const auto name = unique("p");
  auto r = client_.post("/api/v1/pools", stack_.admin_token(),
                        {{"name", name}, {"template", "nat"}, {"size", 2}});
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.header("location"), "/api/v1/pools/" + name);
  stack_.engine().wait_idle();
  auto p = pool(name, stack_.admin_token());
  EXPECT_EQ(p["template"], "nat");
  EXPECT_EQ(p["size"], 2);
  EXPECT_EQ(p["ready"], 2) << p;
  ASSERT_EQ(p["members"].size(), 2u);

  const auto carol_name = unique("carol");
  const auto carol = stack_.make_user(carol_name);
  r = client_.post("/api/v1/pools/" + name + "/claim", carol, {{"name", "work"}});
  // No guest agent on the test driver: the member restarts into carol's seed.
  ASSERT_EQ(r.status, 202) << r.body;
  const auto claimed = r.parsed();
  EXPECT_EQ(claimed["method"], "reboot");
  EXPECT_EQ(claimed["space"]["owner"], carol_name);
  EXPECT_EQ(claimed["space"]["name"], "work");
  const auto op = stack_.wait_operation(claimed["operation"]["id"], carol);
  EXPECT_EQ(op["state"], "succeeded") << op;

  const auto mine = client_.get("/api/v1/spaces", carol).parsed();
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0]["id"], claimed["space"]["id"]);
  EXPECT_EQ(mine[0]["state"], "running");

  stack_.engine().wait_idle();
  p = pool(name, carol);
  ASSERT_EQ(p["members"].size(), 2u) << p;
  for (const auto& m : p["members"]) EXPECT_NE(m["id"], claimed["space"]["id"]);

  // A second claim under the same name is refused; the pool keeps its members.
  r = client_.post("/api/v1/pools/" + name + "/claim", carol, {{"name", "work"}});
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(pool(name, carol)["members"].size(), 2u);

  EXPECT_EQ(client_.request("DELETE", "/api/v1/pools/" + name, carol).status, 403);
  r = client_.request("DELETE", "/api/v1/pools/" + name, stack_.admin_token());
  EXPECT_EQ(r.status, 200) << r.body;
  stack_.engine().wait_idle();
  EXPECT_EQ(client_.get("/api/v1/pools/" + name, carol).status, 404);
  EXPECT_EQ(client_.get("/api/v1/spaces", carol).parsed().size(), 1u);
}

}  // namespace
}  // namespace bowline::api::testing
