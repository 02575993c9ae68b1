// Quotas through the API on the real stack: a create or a claim that takes a user over a limit
// is refused (403, saying what is used, asked and allowed), stopped spaces count, two creates
// at once cannot both take the last room, and only admins set quotas.
#include <gtest/gtest.h>

#include <latch>

#include "api_test_support.hpp"

namespace bowline::api::testing {
namespace {

constexpr std::int64_t kMiB = 1024 * 1024;
constexpr std::int64_t kGiB = 1024 * kMiB;

// 2 vCPUs, 256 MiB, a 1 GiB disk: what each space of it counts for.
std::string sized_template() {
  return "name: ${{ .user.username }}-${{ .space.name }}\nimage: base\nmemory: 256M\ncpus: 2\n"
         "disk: 1G\nnetwork:\n  mode: nat\n  bridge: default\n";
}

class QuotaTest : public ::testing::Test {
 protected:
  explicit QuotaTest(engine::EngineSettings settings = {})
      : stack_(ApiStack::test_http_options(), std::move(settings)) {}

  void SetUp() override {
    const auto r = client_.post("/api/v1/templates", stack_.admin_token(),
                                {{"name", "sized"}, {"yaml", sized_template()}});
    ASSERT_EQ(r.status, 201) << r.body;
  }

  struct Person {
    std::string name, token;
  };
  Person person(const std::string& prefix) {
    const auto name = unique(prefix);
    return {name, stack_.make_user(name)};
  }

  HttpResponse set_quota(const std::string& username, const json& body,
                         const std::string& token = {}) {
    return client_.request("PATCH", "/api/v1/users/" + username + "/quota",
                           token.empty() ? stack_.admin_token() : token, body.dump());
  }

  // Not started: a space counts from its row, whatever its state, and the test driver
  // needs no domain for it.
  HttpResponse create(const Person& who, const std::string& name, bool start = false) {
    return client_.post("/api/v1/spaces", who.token,
                        {{"template", "sized"}, {"name", name}, {"start", start}});
  }

  std::size_t spaces_of(const Person& who) {
    return client_.get("/api/v1/spaces", who.token).parsed().size();
  }

  ApiStack stack_;
  HttpClient client_{stack_.port()};
};

// gtest names suites by fixture: each security_* suite is its own fixture of QuotaTest.
class security_quota : public QuotaTest {};

TEST_F(security_quota, ACreateOverEachKindOfLimitIsRefusedWith403SayingWhatIsUsedAndAllowed) {
  struct Case {
    const char* kind;
    json quota;
    std::string message;  // with USER for the username
  };
  const std::vector<Case> cases{
      {"spaces", {{"spaces", 1}}, "quota: spaces 1 used + 1 asked exceeds USER's 1"},
      {"cpus", {{"cpus", "3"}}, "quota: vCPUs 2 used + 2 asked exceeds USER's 3"},
      {"memory",
       {{"memory", "384M"}},
       "quota: memory 256 MiB used + 256 MiB asked exceeds USER's 384 MiB"},
      {"disk", {{"disk", "1536M"}}, "quota: disk 1 GiB used + 1 GiB asked exceeds USER's 1.5 GiB"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.kind);
    const auto who = person("q");
    ASSERT_EQ(set_quota(who.name, c.quota).status, 200);
    auto r = create(who, "one");
    ASSERT_EQ(r.status, 202) << r.body;
    r = create(who, "two");
    EXPECT_EQ(r.status, 403) << r.body;
    auto want = c.message;
    want.replace(want.find("USER"), 4, who.name);
    EXPECT_EQ(r.parsed()["error"], want + " (set by user set-quota)");
    EXPECT_EQ(spaces_of(who), 1u);  // nothing of the refused space was made
    EXPECT_FALSE(stack_.store().spaces().find_by_name(
        stack_.store().users().find_by_username(who.name)->id, "two"));
  }
}

TEST_F(security_quota, StoppedSpacesCount) {
  const auto who = person("stopped");
  ASSERT_EQ(set_quota(who.name, {{"spaces", 1}, {"memory", "256M"}}).status, 200);
  auto r = create(who, "dev", true);
  ASSERT_EQ(r.status, 202) << r.body;
  const auto id = r.parsed()["space"]["id"].get<std::string>();
  ASSERT_EQ(stack_.wait_operation(r.parsed()["operation"]["id"], who.token)["state"], "succeeded");
  r = client_.post("/api/v1/spaces/" + id + "/stop", who.token, json::object());
  ASSERT_EQ(r.status, 202) << r.body;
  ASSERT_EQ(stack_.wait_operation(r.parsed()["operation"]["id"], who.token)["state"], "succeeded");
  ASSERT_EQ(client_.get("/api/v1/spaces/" + id, who.token).parsed()["state"], "stopped");

  r = create(who, "more");
  EXPECT_EQ(r.status, 403) << r.body;
  const auto error = r.parsed()["error"].get<std::string>();
  EXPECT_NE(error.find("spaces 1 used + 1 asked"), std::string::npos) << error;
  EXPECT_NE(error.find("memory 256 MiB used + 256 MiB asked"), std::string::npos) << error;

  const auto me = client_.get("/api/v1/whoami", who.token).parsed();
  EXPECT_EQ(me["usage"],
            json({{"spaces", 1}, {"cpus", 2}, {"memory", 256 * kMiB}, {"disk", kGiB}}));
}

TEST_F(security_quota, APoolClaimOverQuotaIsRefusedAndTheMemberStaysInThePool) {
  const auto pool = unique("p");
  auto r = client_.post("/api/v1/pools", stack_.admin_token(),
                        {{"name", pool}, {"template", "sized"}, {"size", 1}});
  ASSERT_EQ(r.status, 201) << r.body;
  stack_.engine().wait_idle();
  const auto member = client_.get("/api/v1/pools/" + pool, stack_.admin_token()).parsed();
  ASSERT_EQ(member["ready"], 1) << member;

  const auto who = person("claimer");
  ASSERT_EQ(set_quota(who.name, {{"memory", "128M"}}).status, 200);
  r = client_.post("/api/v1/pools/" + pool + "/claim", who.token, {{"name", "work"}});
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(r.parsed()["error"], "quota: memory 0 B used + 256 MiB asked exceeds " + who.name +
                                     "'s 128 MiB (set by user set-quota)");
  EXPECT_EQ(spaces_of(who), 0u);
  const auto after = client_.get("/api/v1/pools/" + pool, stack_.admin_token()).parsed();
  EXPECT_EQ(after["members"], member["members"]);  // the same member, still unowned

  // Within the quota the same claim goes through.
  ASSERT_EQ(set_quota(who.name, {{"memory", "256M"}}).status, 200);
  r = client_.post("/api/v1/pools/" + pool + "/claim", who.token, {{"name", "work"}});
  ASSERT_TRUE(r.status == 200 || r.status == 202) << r.body;
  EXPECT_EQ(spaces_of(who), 1u);
  stack_.engine().wait_idle();

  // With no member ready, a claim the quota refuses says so rather than "try again".
  r = client_.post("/api/v1/pools", stack_.admin_token(),
                   {{"name", pool + "e"}, {"template", "sized"}, {"size", 0}});
  ASSERT_EQ(r.status, 201) << r.body;
  r = client_.post("/api/v1/pools/" + pool + "e/claim", who.token, {{"name", "again"}});
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_NE(r.body.find("memory 256 MiB used + 256 MiB asked"), std::string::npos) << r.body;
}

// Each create counts the others inside the transaction that writes its row: however the
// requests interleave, no more than the quota's worth get through.
TEST_F(security_quota, ConcurrentCreatesCannotBothTakeTheLastRoom) {
  const auto who = person("racer");
  ASSERT_EQ(set_quota(who.name, {{"spaces", 2}}).status, 200);
  constexpr int kRacers = 6;
  std::latch ready(kRacers);
  std::vector<int> statuses(kRacers);
  std::vector<std::string> bodies(kRacers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRacers; ++i)
    threads.emplace_back([&, i] {
      HttpClient client(stack_.port());
      const auto body =
          json{{"template", "sized"}, {"name", "r" + std::to_string(i)}, {"start", false}}.dump();
      ready.arrive_and_wait();  // all at once
      const auto r = client.request("POST", "/api/v1/spaces", who.token, body);
      statuses[i] = r.status;
      bodies[i] = r.body;
    });
  for (auto& t : threads) t.join();
  int accepted = 0, refused = 0;
  for (int i = 0; i < kRacers; ++i) {
    if (statuses[i] == 202) ++accepted;
    if (statuses[i] == 403) {
      ++refused;
      EXPECT_NE(bodies[i].find("quota: spaces 2 used + 1 asked"), std::string::npos) << bodies[i];
    }
  }
  EXPECT_EQ(accepted, 2);
  EXPECT_EQ(refused, kRacers - 2);
  EXPECT_EQ(spaces_of(who), 2u);
}

TEST_F(security_quota, AnAdminSetsAndClearsAQuota) {
  const auto who = person("quota");
  auto r = set_quota(who.name, {{"spaces", 3}, {"memory", "8G"}, {"disk", 100 * kGiB}});
  ASSERT_EQ(r.status, 200) << r.body;
  auto user = r.parsed();
  EXPECT_EQ(user["quota"]["spaces"], json({{"limit", 3}, {"source", "user"}}));
  EXPECT_EQ(user["quota"]["memory"], json({{"limit", 8 * kGiB}, {"source", "user"}}));
  EXPECT_EQ(user["quota"]["disk"], json({{"limit", 100 * kGiB}, {"source", "user"}}));
  EXPECT_EQ(user["quota"]["cpus"], json({{"limit", nullptr}, {"source", "default"}}));
  EXPECT_EQ(client_.get("/api/v1/users/" + who.name, who.token).parsed()["quota"], user["quota"]);

  // Fields it does not name stay; "default" and null clear one, "unlimited" lifts it.
  r = set_quota(who.name, {{"memory", "default"}, {"disk", nullptr}, {"spaces", "unlimited"}});
  ASSERT_EQ(r.status, 200) << r.body;
  user = r.parsed();
  EXPECT_EQ(user["quota"]["memory"], json({{"limit", nullptr}, {"source", "default"}}));
  EXPECT_EQ(user["quota"]["disk"], json({{"limit", nullptr}, {"source", "default"}}));
  EXPECT_EQ(user["quota"]["spaces"], json({{"limit", nullptr}, {"source", "user"}}));
  const auto stored = stack_.store().users().find_by_username(who.name)->quota;
  EXPECT_EQ(stored, (store::Quota{-1, std::nullopt, std::nullopt, std::nullopt}));

  // Bad values name the field; nothing is written.
  for (const json& bad : {json{{"memory", "lots"}}, json{{"cpus", -2}}, json{{"spaces", "4G"}},
                          json{{"memroy", "8G"}}, json{{"disk", true}}}) {
    r = set_quota(who.name, bad);
    EXPECT_EQ(r.status, 422) << bad << " " << r.body;
  }
  EXPECT_EQ(stack_.store().users().find_by_username(who.name)->quota, stored);
  EXPECT_EQ(set_quota("nobody-here", {{"spaces", 1}}).status, 404);
}

TEST_F(security_quota, ANonAdminCannotSetAQuotaNotEvenTheirOwn) {
  const auto who = person("self");
  const auto other = person("other");
  ASSERT_EQ(set_quota(who.name, {{"spaces", 1}}).status, 200);
  auto r = set_quota(who.name, {{"spaces", "unlimited"}}, who.token);
  EXPECT_EQ(r.status, 403) << r.body;
  r = set_quota(other.name, {{"spaces", 0}}, who.token);
  EXPECT_EQ(r.status, 403) << r.body;
  // Nor through the account's own PATCH, which takes no quota.
  client_.request("PATCH", "/api/v1/users/" + who.name, who.token,
                  json{{"quota", {{"spaces", "unlimited"}}}}.dump());
  EXPECT_EQ(stack_.store().users().find_by_username(who.name)->quota.spaces, 1);
  EXPECT_EQ(stack_.store().users().find_by_username(other.name)->quota.spaces, std::nullopt);
  // And it still holds: their second space is refused.
  ASSERT_EQ(create(who, "a").status, 202);
  EXPECT_EQ(create(who, "b").status, 403);
}

TEST_F(security_quota, UsageCountsEverySpaceAndAdminsSeeEveryonesInTheList) {
  const auto who = person("user");
  ASSERT_EQ(create(who, "a").status, 202);
  ASSERT_EQ(create(who, "b").status, 202);
  const json usage = {{"spaces", 2}, {"cpus", 4}, {"memory", 512 * kMiB}, {"disk", 2 * kGiB}};
  EXPECT_EQ(client_.get("/api/v1/whoami", who.token).parsed()["usage"], usage);
  EXPECT_EQ(client_.get("/api/v1/users/" + who.name, stack_.admin_token()).parsed()["usage"],
            usage);
  bool listed = false;
  for (const auto& u : client_.get("/api/v1/users", stack_.admin_token()).parsed())
    if (u["username"] == who.name) {
      listed = true;
      EXPECT_EQ(u["usage"], usage);
      EXPECT_EQ(u["quota"]["spaces"]["source"], "default");
    }
  EXPECT_TRUE(listed);
}

// The server's defaults (server.quota.*) apply where a user's own quota is unset, and the
// refusal names the setting.
class security_quota_defaults : public QuotaTest {
 protected:
  static engine::EngineSettings with_defaults() {
    engine::EngineSettings s;
    s.default_quota = store::Quota{1, -1, std::nullopt, 4 * kGiB};
    return s;
  }
  security_quota_defaults() : QuotaTest(with_defaults()) {}
};

TEST_F(security_quota_defaults, TheServersDefaultsApplyUntilAUserHasTheirOwn) {
  const auto who = person("dflt");
  auto me = client_.get("/api/v1/whoami", who.token).parsed();
  EXPECT_EQ(me["quota"]["spaces"], json({{"limit", 1}, {"source", "default"}}));
  EXPECT_EQ(me["quota"]["cpus"], json({{"limit", nullptr}, {"source", "default"}}));
  EXPECT_EQ(me["quota"]["disk"], json({{"limit", 4 * kGiB}, {"source", "default"}}));
  ASSERT_EQ(create(who, "a").status, 202);
  auto r = create(who, "b");
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(r.parsed()["error"], "quota: spaces 1 used + 1 asked exceeds " + who.name +
                                     "'s 1 (the server's default, server.quota.spaces)");
  // Their own limit replaces the default.
  ASSERT_EQ(set_quota(who.name, {{"spaces", 2}}).status, 200);
  EXPECT_EQ(create(who, "b").status, 202);
  // The defaults are for users: an admin is held only to a quota of their own.
  const auto admin = client_.get("/api/v1/whoami", stack_.admin_token()).parsed();
  EXPECT_EQ(admin["quota"]["spaces"]["limit"], nullptr);
}

}  // namespace
}  // namespace bowline::api::testing
