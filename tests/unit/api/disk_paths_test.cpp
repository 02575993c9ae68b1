// A user reads another user's disk through the API: not by naming its file. Through the real
// stack (HTTP, engine, test driver, real qcow2 files): every image path from a user is refused
// with words that name no file and are the same whether the file exists or not, and no answer
// about a disk carries a host path.
#include <gtest/gtest.h>

#include "api_test_support.hpp"

namespace bowline::api::testing {
namespace {

class security_disk_paths : public ::testing::Test {
 protected:
  std::string make(const std::string& who, const std::string& username) {
    tokens_[who] = stack_.make_user(username);
    return tokens_[who];
  }
  HttpResponse create_disk(const std::string& token, const json& body) {
    return client_.post("/api/v1/disks", token, body);
  }

  ApiStack stack_;
  HttpClient client_{stack_.port()};
  std::map<std::string, std::string> tokens_;
};

TEST_F(security_disk_paths, NoImagePathFromAUserAndTheSameAnswerWhetherTheFileExists) {
  const auto alice = make("alice", unique("alice"));
  const auto mallory = make("mallory", unique("mallory"));
  ASSERT_EQ(create_disk(alice, {{"name", "secret"}, {"size", "8M"}}).status, 201);
  const auto alices_file = stack_.images() / "volumes";  // somewhere under it
  std::string first;
  for (const std::string& path :
       {(alices_file / "1" / "secret.qcow2").string(), std::string("/etc/shadow"),
        std::string("/etc/no-such-file"), (stack_.images() / "cloud-images/base.qcow2").string()}) {
    const auto r = create_disk(mallory, {{"name", "loot"}, {"image", path}});
    EXPECT_EQ(r.status, 422) << path << ": " << r.body;
    const auto error = r.parsed()["error"].get<std::string>();
    EXPECT_EQ(error.find(path), std::string::npos) << error;
    EXPECT_EQ(error.find(std::filesystem::path(path).filename().string()), std::string::npos)
        << error;
    if (first.empty()) first = error;
    EXPECT_EQ(error, first) << path;
  }
  // An admin fares no better outside server.kvm.import_paths (none here), and learns as little.
  const auto admin_answer =
      create_disk(stack_.admin_token(), {{"name", "x"}, {"image", "/etc/shadow"}});
  EXPECT_EQ(admin_answer.status, 422);
  EXPECT_EQ(admin_answer.body,
            create_disk(stack_.admin_token(), {{"name", "x"}, {"image", "/etc/nope"}}).body);
  EXPECT_TRUE(client_.get("/api/v1/disks", mallory).parsed().empty());
}

TEST_F(security_disk_paths, DiskAnswersNameNoHostFile) {
  const auto alice = make("alice", unique("alice"));
  const auto made = create_disk(alice, {{"name", "data"}, {"size", "8M"}});
  ASSERT_EQ(made.status, 201) << made.body;
  const auto images = stack_.images().string();
  for (const auto& body : {made.body, client_.get("/api/v1/disks", alice).body,
                           client_.get("/api/v1/disks/data", alice).body,
                           client_.get("/api/v1/disks?all=1", stack_.admin_token()).body})
    EXPECT_EQ(body.find(images), std::string::npos) << body;
  EXPECT_FALSE(made.parsed().contains("path"));
  // A copy of one's own disk is the way to a second one, by name.
  const auto copy = create_disk(alice, {{"name", "copy"}, {"fromDisk", "data"}});
  EXPECT_EQ(copy.status, 201) << copy.body;
  EXPECT_EQ(copy.parsed()["source"], "disk data");
}

}  // namespace
}  // namespace bowline::api::testing
