// /api/v1/templates: validation with positions, revisions, deletion while in use.
#include <gtest/gtest.h>

#include "api_test_support.hpp"

namespace bowline::api::testing {
namespace {

class TemplatesTest : public ::testing::Test {
 protected:
  ApiStack stack_;
  HttpClient client_{stack_.port()};
};

constexpr const char* kInvalid =
    "name: dev\n"
    "image: base\n"
    "memory: 2048\n"
    "cpus: lots\n";

TEST_F(TemplatesTest, InvalidYamlIs422WithLineAndColumn) {
  const auto r = client_.post("/api/v1/templates", stack_.admin_token(),
                              {{"name", "broken"}, {"yaml", kInvalid}});
  ASSERT_EQ(r.status, 422) << r.body;
  const auto body = r.parsed();
  EXPECT_EQ(body["error"].get<std::string>().rfind("the template is not valid: broken:", 0), 0u)
      << body;
  ASSERT_TRUE(body["diagnostics"].is_array());
  ASSERT_GE(body["diagnostics"].size(), 2u) << body;
  bool memory = false, cpus = false;
  for (const auto& d : body["diagnostics"]) {
    EXPECT_EQ(d["severity"], "error");
    if (d["path"] == "memory") {
      memory = true;
      EXPECT_EQ(d["line"], 3);
      EXPECT_EQ(d["column"], 9);
    }
    if (d["path"] == "cpus") {
      cpus = true;
      EXPECT_EQ(d["line"], 4);
    }
  }
  EXPECT_TRUE(memory) << body;
  EXPECT_TRUE(cpus) << body;
  EXPECT_EQ(client_.get("/api/v1/templates/broken", stack_.admin_token()).status, 404);

  // Not YAML at all.
  const auto garbage = client_.post("/api/v1/templates", stack_.admin_token(),
                                    {{"name", "garbage"}, {"yaml", "a: [1, 2\nb: }"}});
  EXPECT_EQ(garbage.status, 422) << garbage.body;
  EXPECT_GE(garbage.parsed()["diagnostics"][0]["line"].get<int>(), 1) << garbage.body;
}

TEST_F(TemplatesTest, ValidateAnswersWithoutStoring) {
  const auto bob = stack_.make_user(unique("bob"));
  auto r = client_.post("/api/v1/templates/validate", bob, {{"yaml", kInvalid}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.parsed()["valid"], false);
  EXPECT_FALSE(r.parsed()["diagnostics"].empty());
  r = client_.post("/api/v1/templates/validate", bob, {{"yaml", bridged_template()}});
  EXPECT_EQ(r.parsed()["valid"], true) << r.body;
  EXPECT_EQ(client_.get("/api/v1/templates", bob).parsed(), json::array());
}

TEST_F(TemplatesTest, CreateShowUpdateDelete) {
  const auto& admin = stack_.admin_token();
  auto r =
      client_.post("/api/v1/templates", admin, {{"name", "dev"}, {"yaml", bridged_template()}});
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.parsed()["revision"], 1);
  EXPECT_EQ(r.parsed()["yaml"], bridged_template());
  EXPECT_EQ(
      client_.post("/api/v1/templates", admin, {{"name", "dev"}, {"yaml", bridged_template()}})
          .status,
      409);
  EXPECT_EQ(client_.post("/api/v1/templates", admin, {{"name", "no spaces"}, {"yaml", "x"}}).status,
            422);

  const auto bob = stack_.make_user(unique("bob"));
  const auto list = client_.get("/api/v1/templates", bob).parsed();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["name"], "dev");
  EXPECT_FALSE(list[0].contains("yaml"));
  // Not an admin nor the author: the summary, not the YAML (security_templates below).
  EXPECT_FALSE(client_.get("/api/v1/templates/dev", bob).parsed().contains("yaml"));
  EXPECT_EQ(client_.get("/api/v1/templates/dev", admin).parsed()["yaml"], bridged_template());

  const auto changed = bridged_template() + "environment:\n  - A=1\n";
  r = client_.request("PUT", "/api/v1/templates/dev", admin, json{{"yaml", changed}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.parsed()["revision"], 2);
  r = client_.request("PUT", "/api/v1/templates/dev", admin, json{{"yaml", kInvalid}}.dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(client_.get("/api/v1/templates/dev", bob).parsed()["revision"], 2);
  EXPECT_EQ(client_.request("PUT", "/api/v1/templates/none", admin, json{{"yaml", changed}}.dump())
                .status,
            404);

  // In use: 409; once the space is gone: 204.
  r = client_.post("/api/v1/spaces", bob, {{"template", "dev"}, {"name", "box"}, {"start", false}});
  ASSERT_EQ(r.status, 202) << r.body;
  stack_.wait_operation(r.parsed()["operation"]["id"], bob);
  const auto id = r.parsed()["space"]["id"].get<std::string>();
  r = client_.request("DELETE", "/api/v1/templates/dev", admin);
  EXPECT_EQ(r.status, 409) << r.body;
  r = client_.request("DELETE", "/api/v1/spaces/" + id, bob);
  ASSERT_EQ(r.status, 202) << r.body;
  stack_.wait_operation(r.parsed()["operation"]["id"], bob);
  EXPECT_EQ(client_.request("DELETE", "/api/v1/templates/dev", admin).status, 204);
  EXPECT_EQ(client_.get("/api/v1/templates/dev", bob).status, 404);
}

// Environment values and cloudInit may hold secrets: a user sees what a template offers (its
// description, network, switches, ports), never its YAML; admins and its author do, also once
// the author is no longer an admin.
TEST(security_templates, OnlyAdminsAndTheAuthorReadATemplatesYaml) {
  ApiStack stack;
  HttpClient client(stack.port());
  const std::string secret = "DB_PASSWORD=hunter2-" + unique("s");
  const auto yaml = "description: a small Debian box\n" + bridged_template() +
                    "environment:\n  - " + secret + "\nports: [8000, {port: 3000, name: web}]\n";
  const auto author = stack.make_user(unique("author"), true);
  auto r = client.post("/api/v1/templates", author, {{"name", "secretive"}, {"yaml", yaml}});
  ASSERT_EQ(r.status, 201) << r.body;

  const auto bob = stack.make_user(unique("bob"));
  r = client.get("/api/v1/templates/secretive", bob);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body.find("hunter2"), std::string::npos) << r.body;
  EXPECT_EQ(r.parsed()["readable"], false);
  EXPECT_EQ(r.parsed()["description"], "a small Debian box");
  EXPECT_EQ(r.parsed()["network"], "bridged");
  EXPECT_EQ(r.parsed()["ports"], json::parse(R"([{"port":8000},{"port":3000,"name":"web"}])"));
  EXPECT_EQ(client.get("/api/v1/templates", bob).body.find("hunter2"), std::string::npos);

  // The author, demoted, still reads it; another admin does too.
  const auto author_name = client.get("/api/v1/whoami", author).parsed()["username"];
  const auto author_id = stack.store().users().find_by_username(author_name.get<std::string>())->id;
  stack.store().users().set_permissions(author_id, {});
  r = client.get("/api/v1/templates/secretive", author);
  EXPECT_EQ(r.parsed()["yaml"], yaml);
  EXPECT_EQ(r.parsed()["readable"], true);
  EXPECT_EQ(client.get("/api/v1/templates/secretive", stack.admin_token()).parsed()["yaml"], yaml);
}

}  // namespace
}  // namespace bowline::api::testing
