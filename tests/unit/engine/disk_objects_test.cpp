// Disks as objects through the engine: libvirt's test driver, a real SQLite file and
// real qcow2 files made by qemu-img. Suite names are lowercase so that `ctest -R disk` runs them.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "engine_fixture.hpp"

namespace bowline::engine {
namespace {

namespace fs = std::filesystem;

class disk_objects : public fixture::EngineFixture {};

TEST_F(disk_objects, BlankAndImageDisksAreTheOwnersWithSafeModes) {
  const auto data = blank("data", alice_);
  EXPECT_EQ(data.path, (images_ / "volumes" / std::to_string(alice_) / "data.qcow2").string());
  EXPECT_EQ(data.size_bytes, 8 << 20);
  struct stat st {};
  ASSERT_EQ(::stat(data.path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(fs::path(data.path).parent_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0711u);

  CreateDiskRequest from_image;
  from_image.owner_id = alice_;
  from_image.name = "root";
  from_image.image = spec::Image{spec::ImageKind::Library, "tiny", std::nullopt};
  from_image.size_bytes = 32 << 20;
  const auto root = engine_->create_disk(from_image);
  EXPECT_EQ(root.size_bytes, 32 << 20);
  EXPECT_EQ(root.source, "image tiny");

  // The same name is another user's business, not alice's twice.
  EXPECT_NO_THROW(blank("data", bob_));
  EXPECT_NE(message_of([&] { blank("data", alice_); }, EngineError::Kind::Conflict)
                .find("already has a disk named data"),
            std::string::npos);
  EXPECT_EQ(engine_->list_disks(alice_).size(), 2u);
  EXPECT_EQ(engine_->list_disks(std::nullopt).size(), 3u);
}

TEST_F(disk_objects, NamesAreCheckedAndFailedCreatesLeaveNothing) {
  for (const std::string bad : {"../etc", "a/b", "Upper", "", "x.qcow2"})
    message_of([&] { blank(bad, alice_); }, EngineError::Kind::Invalid);
  CreateDiskRequest missing;
  missing.owner_id = alice_;
  missing.name = "gone";
  missing.image = spec::Image{spec::ImageKind::Library, "no-such-image", std::nullopt};
  EXPECT_NE(message_of([&] { engine_->create_disk(missing); }, EngineError::Kind::Invalid)
                .find("no-such-image"),
            std::string::npos);
  CreateDiskRequest two;  // exactly one source
  two.owner_id = alice_;
  two.name = "two";
  message_of([&] { engine_->create_disk(two); }, EngineError::Kind::Invalid);
  EXPECT_TRUE(store_->disks().list().empty());
  const auto dir = images_ / "volumes" / std::to_string(alice_);
  if (fs::exists(dir)) {
    EXPECT_TRUE(fs::is_empty(dir));
  }
}

TEST_F(disk_objects, DisksCountAgainstTheOwnersQuota) {
  store::Quota quota;
  quota.disk = 20 << 20;
  store_->users().set_quota(alice_, quota);
  blank("one", alice_, 16 << 20);
  EXPECT_NE(message_of([&] { blank("two", alice_, 8 << 20); }, EngineError::Kind::Forbidden)
                .find("quota: disk"),
            std::string::npos);
  EXPECT_EQ(engine_->usage_of_owner(alice_).disk, 16 << 20);
  EXPECT_FALSE(fs::exists(images_ / "volumes" / std::to_string(alice_) / "two.qcow2"));
}

TEST_F(disk_objects, ATemplateWithoutImageBootsFromDisks0) {
  const auto tmpl = add_template("disks:\n  - name: root\n  - name: data\n    bus: sata\n");
  // A missing disk is refused at create, by name, before anything is made.
  const auto refused = message_of([&] { create(tmpl, "dev"); }, EngineError::Kind::NotFound);
  EXPECT_NE(refused.find("disks[0]: alice has no disk named root"), std::string::npos) << refused;
  EXPECT_TRUE(store_->spaces().list().empty());

  CreateDiskRequest root;
  root.owner_id = alice_;
  root.name = "root";
  root.image = spec::Image{spec::ImageKind::Library, "tiny", std::nullopt};
  const auto root_disk = engine_->create_disk(root);
  EXPECT_NE(message_of([&] { create(tmpl, "dev"); }, EngineError::Kind::NotFound)
                .find("disks[1]: alice has no disk named data"),
            std::string::npos);
  const auto data = blank("data", alice_);

  const auto s = space(create(tmpl, "dev").space.id);
  ASSERT_EQ(s.state, store::SpaceState::Running) << s.error;
  const auto xml = hypervisor_->domain_xml(s.domain_name);
  EXPECT_NE(xml.find(root_disk.path), std::string::npos) << xml;
  EXPECT_NE(xml.find(data.path), std::string::npos) << xml;
  EXPECT_FALSE(fs::exists(images_ / s.domain_name / "disk.qcow2"));  // no overlay of its own

  // Attached: not deleted, and the space is named.
  EXPECT_NE(message_of([&] { engine_->delete_disk(alice_, "root"); }, EngineError::Kind::Conflict)
                .find("attached to the running space dev"),
            std::string::npos);
  const auto listed = engine_->disk_info(alice_, "data");
  ASSERT_EQ(listed.spaces.size(), 1u);
  EXPECT_EQ(listed.spaces[0].name, "dev");

  // A second running space must not write the same disk.
  EXPECT_NE(message_of([&] { create(tmpl, "dev2"); }, EngineError::Kind::Conflict)
                .find("in use by the running space dev"),
            std::string::npos);
  EXPECT_FALSE(store_->spaces().find_by_name(alice_, "dev2").has_value());

  // Deleting the space keeps its named disks; then they can go.
  engine_->delete_space(s.id);
  engine_->wait_idle();
  EXPECT_TRUE(fs::exists(root_disk.path));
  EXPECT_TRUE(fs::exists(data.path));
  engine_->delete_disk(alice_, "data");
  EXPECT_FALSE(fs::exists(data.path));
  EXPECT_FALSE(store_->disks().find(alice_, "data").has_value());
}

TEST_F(disk_objects, FromSpaceCopiesAStoppedSpacesDisk) {
  const auto tmpl = add_template("image: tiny\n");
  const auto s = space(create(tmpl, "src").space.id);
  ASSERT_EQ(s.state, store::SpaceState::Running) << s.error;
  CreateDiskRequest copy;
  copy.owner_id = alice_;
  copy.name = "copy";
  copy.from_space = s.id;
  EXPECT_NE(message_of([&] { engine_->create_disk(copy); }, EngineError::Kind::Conflict)
                .find("copies a stopped space's disk"),
            std::string::npos);
  engine_->stop_space(s.id);
  engine_->wait_idle();
  const auto disk = engine_->create_disk(copy);
  EXPECT_EQ(disk.source, "space src");
  EXPECT_FALSE(disks_->info(disk.path).backing_file.has_value());  // standalone
}

// A user names images, disks and snapshots, never host files; an admin names a path only
// under server.kvm.import_paths (none here). Either refusal leaves no file and no row.
class security_disk_sources : public fixture::EngineFixture {};

TEST_F(security_disk_sources, AUserNamesNoHostPathAndAnAdminNoneOutsideTheImportPaths) {
  const auto victim = blank("secret", bob_);
  CreateDiskRequest loot;
  loot.owner_id = alice_;
  loot.name = "loot";
  loot.image = spec::Image{spec::ImageKind::Path, victim.path, std::nullopt};
  const auto refused = message_of([&] { engine_->create_disk(loot); }, EngineError::Kind::Invalid);
  EXPECT_NE(refused.find("a host path is not taken from users"), std::string::npos) << refused;
  EXPECT_EQ(refused.find(victim.path), std::string::npos);
  loot.may_name_paths = true;  // an admin: still no path outside server.kvm.import_paths
  for (const auto& path : {victim.path, std::string("/etc/shadow"), std::string("/no/such")}) {
    loot.image->reference = path;
    const auto message =
        message_of([&] { engine_->create_disk(loot); }, EngineError::Kind::Invalid);
    EXPECT_NE(message.find("takes no image paths"), std::string::npos) << message;
    EXPECT_EQ(message.find(path), std::string::npos) << message;
  }
  EXPECT_FALSE(store_->disks().find(alice_, "loot"));
  EXPECT_FALSE(fs::exists(images_ / "volumes" / std::to_string(alice_) / "loot.qcow2"));
}

TEST_F(disk_objects, FromDiskCopiesTheOwnersOwnDiskOnly) {
  const auto mine = blank("mine", alice_);
  blank("theirs", bob_);
  CreateDiskRequest copy;
  copy.owner_id = alice_;
  copy.name = "copy";
  copy.from_disk = "theirs";  // bob's: alice has none of that name
  EXPECT_NE(message_of([&] { engine_->create_disk(copy); }, EngineError::Kind::NotFound)
                .find("alice has no disk named theirs"),
            std::string::npos);
  copy.from_disk = "mine";
  const auto made = engine_->create_disk(copy);
  EXPECT_EQ(made.source, "disk mine");
  EXPECT_EQ(made.size_bytes, mine.size_bytes);
  EXPECT_FALSE(disks_->info(made.path).backing_file.has_value());  // standalone
}

TEST_F(disk_objects, FromASnapshotCopiesTheDiskAsTheSnapshotHasIt) {
  const auto tmpl = add_template("image: tiny\n");
  const auto s = space(create(tmpl, "src").space.id);
  ASSERT_EQ(s.state, store::SpaceState::Running) << s.error;
  engine_->snapshot_space(s.id, "before", false);
  engine_->wait_idle();
  // The test driver keeps snapshot metadata only: the qcow2 gets its snapshot from qemu-img.
  const auto overlay = files_->space_disk(s.domain_name);
  ASSERT_EQ(std::system(("qemu-img snapshot -c before " + overlay.string()).c_str()), 0);
  CreateDiskRequest copy;
  copy.owner_id = alice_;
  copy.name = "at-before";
  copy.from_space = s.id;
  copy.snapshot = "nope";
  EXPECT_NE(message_of([&] { engine_->create_disk(copy); }, EngineError::Kind::NotFound)
                .find("has no snapshot nope"),
            std::string::npos);
  copy.snapshot = "before";  // the space keeps running
  const auto disk = engine_->create_disk(copy);
  EXPECT_EQ(disk.source, "snapshot before of space src");
  EXPECT_FALSE(disks_->info(disk.path).backing_file.has_value());
}

// A template without a disk size gives its spaces the image's size: that is what they count,
// known before the create from the library's file and kept once the node made the disk.
TEST_F(security_disk_sources, ASpaceWithoutADiskSizeCountsItsImagesSize) {
  store::Quota quota;
  quota.disk = 20 << 20;  // the image is 16 MiB: one space fits, two do not
  store_->users().set_quota(alice_, quota);
  const auto tmpl = add_template("image: tiny\n");
  const auto first = create(tmpl, "one");
  ASSERT_EQ(space(first.space.id).state, store::SpaceState::Running) << space(first.space.id).error;
  EXPECT_EQ(space(first.space.id).disk_bytes, 16 << 20);
  EXPECT_EQ(engine_->usage_of_owner(alice_).disk, 16 << 20);
  EXPECT_NE(
      message_of([&] { create(tmpl, "two"); }, EngineError::Kind::Forbidden).find("quota: disk"),
      std::string::npos);
}

TEST_F(disk_objects, LeftoversOfAnEarlierServerAreSweptAtStart) {
  const auto kept = blank("kept", alice_);
  const auto staging = files_->staging_file("import-dead");
  std::ofstream(staging) << "half an import";
  const auto half = fs::path(kept.path).parent_path() / "half.qcow2.part";
  std::ofstream(half) << "half a disk";
  EXPECT_EQ(files_->sweep_leftovers(), 2u);
  EXPECT_FALSE(fs::exists(staging));
  EXPECT_FALSE(fs::exists(half));
  EXPECT_TRUE(fs::exists(kept.path));
  EXPECT_EQ(files_->sweep_leftovers(), 0u);
}

}  // namespace
}  // namespace bowline::engine
