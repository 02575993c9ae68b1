// Templates carry their display and console switches, which the web UI's space menu needs.
#include <gtest/gtest.h>

#include "api_test_support.hpp"

namespace bowline::api::testing {
namespace {

TEST(TemplateSwitches, DisplayAndConsoleInListGetCreateAndUpdate) {
  ApiStack stack;
  HttpClient client(stack.port());
  const auto& admin = stack.admin_token();
  auto r = client.post("/api/v1/templates", admin,
                       {{"name", "desk"}, {"yaml", bridged_template() + "display: true\n"}});
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.parsed()["display"], true);
  EXPECT_EQ(r.parsed()["console"], false);
  r = client.post("/api/v1/templates", admin, {{"name", "plain"}, {"yaml", bridged_template()}});
  ASSERT_EQ(r.status, 201) << r.body;

  const auto bob = stack.make_user(unique("bob"));
  for (const auto& t : client.get("/api/v1/templates", bob).parsed()) {
    EXPECT_EQ(t["display"], t["name"] == "desk") << t;
    EXPECT_EQ(t["console"], false) << t;
  }
  r = client.request("PUT", "/api/v1/templates/plain", admin,
                     json{{"yaml", bridged_template() + "console: true\n"}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.parsed()["console"], true);
  const auto got = client.get("/api/v1/templates/plain", bob).parsed();
  EXPECT_EQ(got["console"], true);
  EXPECT_EQ(got["display"], false);
}

}  // namespace
}  // namespace bowline::api::testing
