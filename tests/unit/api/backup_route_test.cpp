// GET /api/v1/backup: admins get the server's backup archive (server/backup.hpp), which
// restores into a fresh data directory; nobody else gets a byte of it.
#include <gtest/gtest.h>

#include "../common/scratch_files.hpp"
#include "api_test_support.hpp"
#include "server/backup.hpp"

namespace bowline::api::testing {
namespace {

class BackupRouteTest : public ::testing::Test {
 protected:
  BackupRouteTest() {
    ApiOptions options;
    options.backup = [this](const std::function<void(std::string_view)>& sink) {
      server::write_backup({stack_.dir(), "settings\n", std::nullopt, 1'800'000'000'000}, sink);
    };
    api_ = std::make_unique<Api>(stack_.store(), stack_.engine(), stack_.events(), options);
  }

  Response get(const std::string& token) {
    Request request;
    request.method = "GET";
    request.target = request.path = "/api/v1/backup";
    request.headers["authorization"] = "Bearer " + token;
    request.remote = "127.0.0.1";
    auto response = api_->handle(request);
    return response.later ? response.later->run() : response;
  }

  ApiStack stack_;
  std::unique_ptr<Api> api_;
};

TEST_F(BackupRouteTest, AnAdminGetsAnArchiveThatRestores) {
  const auto alice = unique("alice");
  stack_.make_user(alice);
  const auto response = get(stack_.admin_token());
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.content_type, "application/x-tar");
  TempDir target;
  const auto archive = target.path() / "b.tar";
  test_support::write_file(archive.string(), response.body);
  const auto report = server::restore_backup({archive, target.path() / "data", false});
  EXPECT_GE(report.users, 2u);  // the admin and alice
  util::SystemClock clock;
  store::Store restored(target.path() / "data" / "bowline.db", clock);
  EXPECT_TRUE(restored.users().find_by_username(alice));
}

TEST_F(BackupRouteTest, NobodyElseGetsIt) {
  const auto response = get(stack_.make_user(unique("bob")));
  EXPECT_EQ(response.status, 403);
  EXPECT_EQ(response.body.find("SQLite"), std::string::npos);
  HttpClient client(stack_.port());
  // The stack's own Api has no backup configured.
  EXPECT_EQ(client.get("/api/v1/backup", stack_.admin_token()).status, 404);
}

}  // namespace
}  // namespace bowline::api::testing
