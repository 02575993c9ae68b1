// bowline admin backup and restore (server/backup.hpp): an archive made while the store is in
// use comes back whole into another data directory; a changed, cut or hostile archive, a data
// directory that has a store, or one a server uses, is refused with nothing changed.
#include "server/backup.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "../common/scratch_files.hpp"
#include "engine/space_archive.hpp"
#include "server/data_dir_lock.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"

namespace bowline::server {
namespace {

namespace fs = std::filesystem;
using test_support::read_file;
using test_support::TempDir;
using test_support::write_file;
using ::testing::HasSubstr;

class reliability_restore : public ::testing::Test {
 protected:
  reliability_restore() {
    fs::create_directories(source_);
    store_ = std::make_unique<store::Store>(source_ / "bowline.db", clock_);
    store::NewUser alice;
    alice.username = "alice";
    store_->users().create(alice);
    store_->templates().create("dev", "image: debian\n", std::nullopt);
    write_file((source_ / "admin.token").string(), "secret-admin-token\n");
    write_file((source_ / "tls-key.pem").string(), "-----BEGIN PRIVATE KEY-----\n");
  }

  // A backup of the source, made while its store is open.
  fs::path backup() {
    std::string archive;
    write_backup(
        {source_, "server.listen = 127.0.0.1:0 (default)\n", std::nullopt, 1'800'000'000'000},
        [&archive](std::string_view piece) { archive.append(piece); });
    const auto path = dir_.path() / "backup.tar";
    write_file(path.string(), archive);
    return path;
  }

  RestoreReport restore(const fs::path& archive, bool force = false) {
    return restore_backup({archive, target_, force});
  }

  TempDir dir_;
  util::SystemClock clock_;
  fs::path source_ = dir_.path() / "source";
  fs::path target_ = dir_.path() / "target";
  std::unique_ptr<store::Store> store_;
};

TEST_F(reliability_restore, ABackupOfARunningServerComesBackWhole) {
  const auto report = restore(backup());
  EXPECT_EQ(report.users, 1u);
  EXPECT_EQ(report.templates, 1u);
  EXPECT_EQ(report.created_at, 1'800'000'000'000);
  EXPECT_THAT(report.members,
              ::testing::ElementsAre("bowline.db", "admin.token", "tls-key.pem", "settings.txt"));
  store::Store restored(target_ / "bowline.db", clock_);
  EXPECT_TRUE(restored.users().find_by_username("alice"));
  EXPECT_EQ(read_file((target_ / "admin.token").string()), "secret-admin-token\n");
  EXPECT_EQ(fs::status(target_ / "tls-key.pem").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_THAT(read_file((report.settings_copy / "settings.txt").string()),
              HasSubstr("server.listen"));
  // Nothing of the staging is left.
  for (const auto& entry : fs::directory_iterator(target_))
    EXPECT_NE(entry.path().filename().string().rfind(".restore-", 0), 0u) << entry.path();
}

TEST_F(reliability_restore, AChangedByteIsRefusedAndNothingIsPlaced) {
  const auto archive = backup();
  auto bytes = read_file(archive.string());
  bytes[512 + 100] ^= 1;  // inside the store's first page
  write_file(archive.string(), bytes);
  try {
    restore(archive);
    FAIL() << "a changed archive was restored";
  } catch (const BackupError& e) {
    EXPECT_THAT(e.what(), HasSubstr("does not match its manifest"));
  }
  EXPECT_FALSE(fs::exists(target_ / "bowline.db"));
  EXPECT_FALSE(fs::exists(target_ / "admin.token"));
}

TEST_F(reliability_restore, ACutArchiveIsRefused) {
  const auto archive = backup();
  auto bytes = read_file(archive.string());
  write_file(archive.string(), bytes.substr(0, bytes.size() / 2));
  EXPECT_THROW(restore(archive), BackupError);
  EXPECT_FALSE(fs::exists(target_ / "bowline.db"));
}

TEST_F(reliability_restore, AMemberNamedLikeAPathIsRefused) {
  const auto archive = dir_.path() / "hostile.tar";
  const std::string evil = "owned\n";
  write_file(archive.string(),
             engine::archive::tar_header("../../etc/cron.d/evil", evil.size(), 0) + evil +
                 engine::archive::tar_padding(evil.size()) + std::string(1024, '\0'));
  try {
    restore(archive);
    FAIL() << "a hostile archive was restored";
  } catch (const BackupError& e) {
    EXPECT_THAT(e.what(), HasSubstr("not a bowline backup"));
  }
  EXPECT_FALSE(fs::exists(dir_.path() / "etc"));
}

TEST_F(reliability_restore, AStoreThereIsKeptUnlessForcedAndThenMovedAside) {
  const auto archive = backup();
  fs::create_directories(target_);
  write_file((target_ / "bowline.db").string(), "the store that was here");
  EXPECT_THROW(restore(archive), BackupError);
  EXPECT_EQ(read_file((target_ / "bowline.db").string()), "the store that was here");
  const auto report = restore(archive, true);
  ASSERT_FALSE(report.moved_aside.empty());
  EXPECT_EQ(read_file((report.moved_aside / "bowline.db").string()), "the store that was here");
  store::Store restored(target_ / "bowline.db", clock_);
  EXPECT_TRUE(restored.users().find_by_username("alice"));
}

TEST_F(reliability_restore, NeverUnderARunningServer) {
  const auto archive = backup();
  fs::create_directories(target_);
  const DataDirLock server(target_);
  try {
    restore(archive);
    FAIL() << "restored under a running server";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("uses the data directory"));
  }
  EXPECT_FALSE(fs::exists(target_ / "bowline.db"));
}

}  // namespace
}  // namespace bowline::server
