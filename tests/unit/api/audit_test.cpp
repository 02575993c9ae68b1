// The audit log (docs/audit.md): what changes state and every socket into a space is recorded
// with who, from where, what, which space and the answer; reads are not; only admins read it;
// the JSON-lines file is 0600 and the store's rows are pruned by age.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "api/audit_trail.hpp"
#include "api_test_support.hpp"

namespace bowline::api::testing {
namespace {

class AuditTest : public ::testing::Test {
 protected:
  AuditTest() {
    HttpClient client(stack_.port());
    const auto made = client.post("/api/v1/templates", stack_.admin_token(),
                                  {{"name", tmpl_}, {"yaml", bridged_template()}});
    EXPECT_EQ(made.status, 201) << made.body;
    alice_ = unique("alice");
    alice_token_ = stack_.make_user(alice_);
    mallory_token_ = stack_.make_user(unique("mallory"));
  }

  json audit(const std::string& query, const std::string& token) {
    HttpClient client(stack_.port());
    const auto r = client.get("/api/v1/audit" + query, token);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.parsed();
  }

  ApiStack stack_;
  std::string tmpl_ = unique("t");
  std::string alice_, alice_token_, mallory_token_;
};

TEST_F(AuditTest, RecordsWhoDidWhatToWhichSpaceAndTheAnswer) {
  HttpClient client(stack_.port());
  const auto made =
      client.post("/api/v1/spaces", alice_token_, {{"template", tmpl_}, {"name", unique("s")}});
  ASSERT_EQ(made.status, 202) << made.body;
  const auto id = made.parsed()["space"]["id"].get<std::string>();
  stack_.wait_operation(made.parsed()["operation"]["id"].get<std::int64_t>(), alice_token_);
  // Another user's attempt on it is refused and recorded all the same.
  const auto refused = client.post("/api/v1/spaces/" + id + "/start", mallory_token_, json{});
  EXPECT_EQ(refused.status, 404);
  // Reads are not recorded.
  EXPECT_EQ(client.get("/api/v1/spaces/" + id, alice_token_).status, 200);

  const auto entries = audit("?space=" + id, stack_.admin_token());
  ASSERT_EQ(entries.size(), 2u) << entries.dump();
  EXPECT_EQ(entries[0]["user"], alice_);
  EXPECT_EQ(entries[0]["action"], "POST /api/v1/spaces");
  EXPECT_EQ(entries[0]["status"], 202);
  EXPECT_EQ(entries[0]["peer"], "127.0.0.1");
  EXPECT_EQ(entries[1]["action"], "POST /api/v1/spaces/" + id + "/start");
  EXPECT_EQ(entries[1]["status"], 404);
  EXPECT_NE(entries[1]["user"], alice_);
  EXPECT_LT(entries[0]["id"].get<std::int64_t>(), entries[1]["id"].get<std::int64_t>());

  const auto hers = audit("?user=" + alice_, stack_.admin_token());
  for (const auto& e : hers) EXPECT_EQ(e["user"], alice_) << e.dump();
  EXPECT_EQ(audit("?user=" + alice_ + "&since=1h", stack_.admin_token()).size(), hers.size());
  EXPECT_TRUE(
      audit("?user=" + alice_ + "&since=2999-01-01T00:00:00Z", stack_.admin_token()).empty());
  EXPECT_EQ(audit("?limit=1", stack_.admin_token()).size(), 1u);
}

TEST_F(AuditTest, AFailedLoginIsRecordedUnderTheNameTriedWithoutThePassword) {
  HttpClient client(stack_.port());
  const auto r =
      client.post("/api/v1/session", "", {{"username", alice_}, {"password", "hunter2-wrong"}});
  EXPECT_GE(r.status, 400);
  const auto entries = audit("?user=" + alice_, stack_.admin_token());
  ASSERT_FALSE(entries.empty());
  EXPECT_EQ(entries.back()["action"], "POST /api/v1/session");
  EXPECT_EQ(entries.back()["status"], r.status);
  EXPECT_EQ(entries.dump().find("hunter2"), std::string::npos);
}

TEST_F(AuditTest, OnlyAdminsReadItAndBadFiltersAreNamed) {
  HttpClient client(stack_.port());
  EXPECT_EQ(client.get("/api/v1/audit", alice_token_).status, 403);
  EXPECT_EQ(client.get("/api/v1/audit", "").status, 401);
  const auto since = client.get("/api/v1/audit?since=yesterday", stack_.admin_token());
  EXPECT_EQ(since.status, 400);
  EXPECT_NE(since.body.find("since"), std::string::npos) << since.body;
  EXPECT_EQ(client.get("/api/v1/audit?limit=0", stack_.admin_token()).status, 400);
}

// A socket refused before its upgrade is recorded like one that opened.
TEST_F(AuditTest, SocketAttemptsIntoSpacesAreRecorded) {
  HttpClient client(stack_.port());
  const std::string id = "00000000-0000-4000-8000-000000000000";
  const auto r = client.get("/api/v1/spaces/" + id + "/console", mallory_token_);
  EXPECT_EQ(r.status, 404);
  const auto entries = audit("?space=" + id, stack_.admin_token());
  ASSERT_EQ(entries.size(), 1u) << entries.dump();
  EXPECT_EQ(entries[0]["action"], "GET /api/v1/spaces/" + id + "/console");
}

Request post(const std::string& path, const std::string& token) {
  Request r;
  r.method = "POST";
  r.target = r.path = path;
  r.headers["authorization"] = "Bearer " + token;
  r.headers["content-type"] = "application/json";
  r.body = "{}";
  r.remote = "198.51.100.7";
  return r;
}

TEST_F(AuditTest, TheFileGetsOneJsonLinePerEntryAndOnlyItsOwnerMayReadIt) {
  ApiOptions options;
  options.audit.file = stack_.dir() / "audit.jsonl";
  Api api(stack_.store(), stack_.engine(), stack_.events(), options);
  for (int i = 0; i < 2; ++i) {
    auto request = post("/api/v1/spaces/nope/stop", alice_token_);
    EXPECT_EQ(api.handle(request).status, 404);
  }
  struct stat st {};
  ASSERT_EQ(::stat(options.audit.file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::ifstream in(options.audit.file);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    const auto e = json::parse(line);
    EXPECT_EQ(e["user"], alice_);
    EXPECT_EQ(e["peer"], "198.51.100.7");
    EXPECT_EQ(e["action"], "POST /api/v1/spaces/nope/stop");
    EXPECT_EQ(e["space"], "nope");
    ++lines;
  }
  EXPECT_EQ(lines, 2);
}

TEST_F(AuditTest, EntriesOlderThanTheRetentionArePruned) {
  util::ManualClock clock(1'800'000'000'000);
  ApiOptions options;
  options.clock = &clock;
  options.audit.retention = std::chrono::hours(24);
  Api api(stack_.store(), stack_.engine(), stack_.events(), options);
  auto first = post("/api/v1/spaces/old/stop", alice_token_);
  api.handle(first);
  clock.advance(25LL * 3600 * 1000);
  auto second = post("/api/v1/spaces/new/stop", alice_token_);
  api.handle(second);
  store::AuditFilter all;
  all.username = alice_;
  std::vector<std::string> left;
  for (const auto& e : stack_.store().audit().list(all)) left.push_back(e.space_id.value_or(""));
  EXPECT_EQ(left, std::vector<std::string>{"new"});
}

TEST_F(AuditTest, ASwitchedOffTrailRecordsNothing) {
  ApiOptions options;
  options.audit.enabled = false;
  Api api(stack_.store(), stack_.engine(), stack_.events(), options);
  auto request = post("/api/v1/spaces/quiet/stop", alice_token_);
  api.handle(request);
  EXPECT_TRUE(audit("?space=quiet", stack_.admin_token()).empty());
}

}  // namespace
}  // namespace bowline::api::testing
