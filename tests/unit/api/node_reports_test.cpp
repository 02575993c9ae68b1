// GET /api/v1/nodes keeps each node's report for a while (ReportCache): the check runs again
// only when the report is old or an admin asks for a fresh one.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "api/report_cache.hpp"
#include "api_test_support.hpp"

namespace bowline::api::testing {
namespace {

TEST(ReportCache, MakesAReportOnlyWhenItIsOldOrAFreshOneIsAskedFor) {
  util::ManualClock clock(1'000'000);
  int made = 0;
  ReportCache cache(clock, 15'000, [&] { return nlohmann::json{{"n", ++made}}; });
  EXPECT_EQ(cache.get()["n"], 1);
  EXPECT_EQ(cache.get()["checkedAt"], 1'000'000);
  clock.advance(14'999);
  EXPECT_EQ(cache.get()["n"], 1);
  clock.advance(1);
  EXPECT_EQ(cache.get()["n"], 2);
  EXPECT_EQ(cache.get()["checkedAt"], 1'015'000);
  EXPECT_EQ(cache.get(true)["n"], 3);
  clock.set(900'000);  // the wall clock went back: the report's age is unknown
  EXPECT_EQ(cache.get()["n"], 4);
}

TEST(ReportCache, CallersThatFindItStaleTogetherWaitForOneCheck) {
  util::ManualClock clock;
  std::atomic<int> made{0};
  ReportCache cache(clock, 15'000, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return nlohmann::json{{"n", ++made}};
  });
  std::vector<std::thread> callers;
  for (int i = 0; i < 8; ++i) callers.emplace_back([&] { cache.get(); });
  for (auto& t : callers) t.join();
  EXPECT_EQ(made.load(), 1);
}

TEST(NodeReports, TheNodesRouteServesTheKeptReportAndOnlyAdminsRefreshIt) {
  ApiStack stack;
  util::ManualClock clock;
  std::atomic<int> checks{0};
  ApiOptions options;
  options.clock = &clock;
  options.report = [&](engine::Node&) {
    ++checks;
    return nlohmann::json{
        {"name", "local"}, {"runtimes", {"qemu"}}, {"checks", nlohmann::json::array()}};
  };
  Api api(stack.store(), stack.engine(), stack.events(), options);
  const auto bob = stack.make_user("bob-nodes");
  const auto get = [&](const std::string& token, const std::string& query = "") {
    Request r;
    r.method = "GET";
    r.path = "/api/v1/nodes";
    r.target = r.path + (query.empty() ? "" : "?" + query);
    if (!query.empty())
      r.query[query.substr(0, query.find('='))] = query.substr(query.find('=') + 1);
    r.headers["authorization"] = "Bearer " + token;
    return api.handle(r);
  };
  auto r = get(bob);
  ASSERT_EQ(r.status, 200) << r.body;
  const auto body = nlohmann::json::parse(r.body);
  EXPECT_EQ(body[0]["kind"], "libvirt");
  EXPECT_EQ(body[0]["checkedAt"], clock.now_unix_ms());
  EXPECT_EQ(get(bob).status, 200);
  EXPECT_EQ(get(stack.admin_token()).status, 200);
  EXPECT_EQ(checks.load(), 1);
  EXPECT_EQ(get(bob, "refresh=1").status, 403);
  EXPECT_EQ(checks.load(), 1);
  EXPECT_EQ(get(stack.admin_token(), "refresh=1").status, 200);
  EXPECT_EQ(checks.load(), 2);
  clock.advance(15'000);
  EXPECT_EQ(get(bob).status, 200);
  EXPECT_EQ(checks.load(), 3);
}

TEST(NodeReports, EachNodeCarriesItsCapabilities) {
  ApiStack stack;
  const auto bob = stack.make_user("bob-capabilities");
  HttpClient client(stack.port());
  const auto r = client.get("/api/v1/nodes", bob);
  ASSERT_EQ(r.status, 200) << r.body;
  const auto nodes = r.parsed();
  ASSERT_EQ(nodes.size(), stack.engine().nodes().size());
  const auto& node = *stack.engine().nodes().front();
  EXPECT_EQ(nodes[0]["capabilities"], node.capabilities().to_json());
  const auto& first = nodes[0]["capabilities"][0];
  EXPECT_EQ(first["name"], "console");
  EXPECT_EQ(first["supported"], true);
  EXPECT_TRUE(first["reason"].is_null());
  ASSERT_EQ(nodes[0]["capabilities"].size(), engine::kCapabilities.size());
}

}  // namespace
}  // namespace bowline::api::testing
