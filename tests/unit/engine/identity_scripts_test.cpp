// The claim's rename program run for real by perl, against a directory laid out like a pool
// member after cloud-init made its `pool` account (ROOT instead of "/").
#include "engine/identity_scripts.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/process.hpp"

namespace bowline::engine {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
void write(const fs::path& p, const std::string& text, fs::perms mode = fs::perms(0644)) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
  fs::permissions(p, mode);
}

class RenameAccount : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "chown needs root";
    root_ = fs::temp_directory_path() / ("bowline-rename-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    write(root_ / "etc/passwd",
          "root:x:0:0:root:/root:/bin/bash\n"
          "pool:x:1000:1000::/home/pool:/bin/sh\n"
          "poolside:x:1001:1001::/home/poolside:/bin/bash\n");
    write(root_ / "etc/shadow",
          "root:*:20000:0:99999:7:::\npool:!:20000:0:99999:7:::\npoolside:!:20000::::::\n",
          fs::perms(0640));
    write(root_ / "etc/group",
          "root:x:0:\nadm:x:4:syslog,pool\nsudo:x:27:pool\npool:x:1000:\npoolside:x:1001:\n");
    write(root_ / "etc/gshadow", "root:*::\nadm:*::syslog,pool\npool:!::\npoolside:!::\n",
          fs::perms(0640));
    write(root_ / "etc/sudoers.d/90-cloud-init-users",
          "# User rules for pool\npool ALL=(ALL) NOPASSWD:ALL\npoolside ALL=(ALL) ALL\n",
          fs::perms(0440));
    write(root_ / "etc/sudoers.d/README", "# notes\npool ALL=(ALL) ALL\n", fs::perms(0440));
    write(root_ / "etc/sudoers.d/x.dpkg-old", "pool ALL=(ALL) ALL\n", fs::perms(0440));
    write(root_ / "etc/hostname", "pool-abc\n");
    write(root_ / "etc/hosts", "127.0.0.1 localhost\n127.0.1.1 pool-abc\n::1 localhost");
    write(root_ / "home/pool/.bashrc", "# bash\n");
    write(root_ / "home/pool/.ssh/authorized_keys", "", fs::perms(0600));
    ASSERT_EQ(::chown((root_ / "home/pool").c_str(), 1000, 1000), 0);
  }
  void TearDown() override {
    if (!root_.empty()) fs::remove_all(root_);
  }
  util::ProcessResult rename(const std::string& user, const std::string& host = "dev-box",
                             const std::string& keys = "ssh-ed25519 AAAA a@b\n",
                             const std::string& hash = "$6$salt$hash") {
    util::SystemProcessRunner runner;
    return runner.run(
        {"perl", "-e", kRenameAccountPerl, root_.string() + "/", user, host, "pool", keys, hash},
        30s);
  }
  struct stat stat_of(const fs::path& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st;
  }
  fs::path root_;
};

TEST_F(RenameAccount, GivesThePoolAccountToTheOwner) {
  const auto r = rename("alice");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read(root_ / "etc/passwd"),
            "root:x:0:0:root:/root:/bin/bash\n"
            "alice:x:1000:1000::/home/alice:/bin/bash\n"
            "poolside:x:1001:1001::/home/poolside:/bin/bash\n");
  EXPECT_EQ(read(root_ / "etc/shadow"),
            "root:*:20000:0:99999:7:::\nalice:$6$salt$hash:20000:0:99999:7:::\n"
            "poolside:!:20000::::::\n");
  EXPECT_EQ(read(root_ / "etc/group"),
            "root:x:0:\nadm:x:4:syslog,alice\nsudo:x:27:alice\nalice:x:1000:\npoolside:x:1001:\n");
  EXPECT_EQ(read(root_ / "etc/gshadow"),
            "root:*::\nadm:*::syslog,alice\nalice:!::\npoolside:!::\n");
  EXPECT_EQ(stat_of(root_ / "etc/shadow").st_mode & 07777, 0640u);  // kept
  EXPECT_EQ(read(root_ / "etc/sudoers.d/90-cloud-init-users"),
            "# User rules for pool\npoolside ALL=(ALL) ALL\n");
  EXPECT_EQ(read(root_ / "etc/sudoers.d/README"), "# notes\n");
  EXPECT_EQ(read(root_ / "etc/sudoers.d/x.dpkg-old"), "pool ALL=(ALL) ALL\n");  // sudo skips it
  EXPECT_EQ(read(root_ / "etc/sudoers.d/90-bowline-owner"), "alice ALL=(ALL) NOPASSWD:ALL\n");
  EXPECT_EQ(stat_of(root_ / "etc/sudoers.d/90-bowline-owner").st_mode & 07777, 0440u);
  EXPECT_FALSE(fs::exists(root_ / "home/pool"));
  EXPECT_EQ(read(root_ / "home/alice/.bashrc"), "# bash\n");
  EXPECT_EQ(read(root_ / "home/alice/.ssh/authorized_keys"), "ssh-ed25519 AAAA a@b\n");
  EXPECT_EQ(stat_of(root_ / "home/alice").st_uid, 1000u);
  EXPECT_EQ(read(root_ / "etc/hostname"), "dev-box\n");
  EXPECT_EQ(read(root_ / "etc/hosts"), "127.0.0.1 localhost\n::1 localhost\n127.0.1.1 dev-box\n");
  for (const auto& e : fs::recursive_directory_iterator(root_))
    EXPECT_EQ(e.path().string().find(".bowline-new"), std::string::npos) << e.path();
}

TEST_F(RenameAccount, MakesTheKeysFileWhenThePlaceholderHadNone) {
  fs::remove_all(root_ / "home/pool/.ssh");
  const auto r = rename("bob", "", "", "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto ssh = stat_of(root_ / "home/bob/.ssh");
  EXPECT_EQ(ssh.st_mode & 07777, 0700u);
  EXPECT_EQ(ssh.st_uid, 1000u);
  const auto keys = stat_of(root_ / "home/bob/.ssh/authorized_keys");
  EXPECT_EQ(keys.st_mode & 07777, 0600u);
  EXPECT_EQ(keys.st_uid, 1000u);
  EXPECT_EQ(keys.st_size, 0);
  EXPECT_NE(read(root_ / "etc/shadow").find("\nbob:!:20000"), std::string::npos);  // locked
  EXPECT_EQ(read(root_ / "etc/hostname"), "pool-abc\n");  // no host name: kept
}

// Exit 3 and nothing touched: the shell way takes over.
TEST_F(RenameAccount, AnExistingUserOrNoPlaceholderChangesNothing) {
  const auto before = read(root_ / "etc/passwd");
  EXPECT_EQ(rename("poolside").exit_code, 3);
  EXPECT_EQ(rename("pool").exit_code, 3);
  EXPECT_EQ(read(root_ / "etc/passwd"), before);
  write(root_ / "etc/passwd", "root:x:0:0:root:/root:/bin/bash\n");
  EXPECT_EQ(rename("alice").exit_code, 3);
  EXPECT_FALSE(fs::exists(root_ / "etc/sudoers.d/90-bowline-owner"));
}

// A value is data: regex and shell characters in the name reach the files literally.
TEST_F(RenameAccount, ValuesAreDataNotProgram) {
  const auto r = rename("a.b$x", "h", "k'\"$(x)\n", "$6$s$h/.");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read(root_ / "etc/passwd").find("\na.b$x:x:1000:1000::/home/a.b$x:/bin/bash\n"),
            std::string::npos);
  EXPECT_EQ(read(root_ / "home/a.b$x/.ssh/authorized_keys"), "k'\"$(x)\n");
}

}  // namespace
}  // namespace bowline::engine
