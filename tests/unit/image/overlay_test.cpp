// Disks and the in-process qcow2 writer: the commands through a scripted ProcessRunner, then
// every overlay we write checked by the real qemu-img and qemu-io.
#include "image/overlay.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <filesystem>

#include "doubles/fake_process_runner.hpp"
#include "image/qcow2.hpp"
#include "image_test_support.hpp"

namespace bowline::image::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Argv = std::vector<std::string>;

constexpr std::uint64_t kMiB = 1024 * 1024;
constexpr std::uint64_t kGiB = 1024 * kMiB;

std::string info_json(std::uint64_t size, const std::string& format = "qcow2") {
  return R"({"virtual-size": )" + std::to_string(size) + R"(, "filename": "x", "format": ")" +
         format + R"(", "dirty-flag": false})";
}

// A standalone qcow2 base, made by the real qemu-img (bases with backing files are refused).
void make_base(const std::string& path, std::uint64_t size) {
  util::SystemProcessRunner runner;
  const auto made =
      runner.run({"qemu-img", "create", "-q", "-f", "qcow2", path, std::to_string(size)}, 30s);
  ASSERT_EQ(made.exit_code, 0) << made.err;
}

// Overlays are written in-process: no command runs on the way, whatever the size.
TEST(DisksArgv, CreatingAnOverlayRunsNoCommand) {
  TempDir dir;
  make_base(dir.file("base.qcow2"), 2 * kGiB);
  doubles::FakeProcessRunner runner;
  Disks disks(runner);
  disks.create_overlay(dir.file("base.qcow2"), dir.file("a.qcow2"));
  disks.create_overlay(dir.file("base.qcow2"), dir.file("b.qcow2"), 20 * kGiB + 1);
  EXPECT_TRUE(runner.calls.empty());
  EXPECT_EQ(read_qcow2_header(dir.file("a.qcow2"))->virtual_size, 2 * kGiB);
  EXPECT_EQ(read_qcow2_header(dir.file("b.qcow2"))->virtual_size, 20 * kGiB + 512);
}

TEST(DisksArgv, ARelativeBaseIsRecordedAbsolute) {
  TempDir dir;
  make_base(dir.file("base.qcow2"), kGiB);
  const auto cwd = fs::current_path();
  fs::current_path(dir.file(""));
  doubles::FakeProcessRunner runner;
  Disks disks(runner);
  disks.create_overlay("./sub/../base.qcow2", dir.file("disk.qcow2"));
  fs::current_path(cwd);
  EXPECT_EQ(read_qcow2_header(dir.file("disk.qcow2"))->backing_file,
            (fs::path(dir.file("")) / "base.qcow2").lexically_normal().string());
}

TEST(DisksArgv, ASizeBelowTheBaseIsRefusedBeforeAnythingIsMade) {
  TempDir dir;
  make_base(dir.file("base.qcow2"), 2 * kGiB);
  doubles::FakeProcessRunner runner;
  Disks disks(runner);
  try {
    disks.create_overlay(dir.file("base.qcow2"), dir.file("disk.qcow2"), kGiB);
    FAIL() << "no error";
  } catch (const DiskError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the disk size 1073741824 bytes (1 GiB) is smaller than the "
                                    "base image's virtual size 2147483648 bytes (2 GiB)"));
  }
  EXPECT_FALSE(fs::exists(dir.file("disk.qcow2")));
}

// Only then is qemu-img asked, for a message that names the format.
TEST(DisksArgv, ARawBaseIsRefusedByItsFormatsName) {
  TempDir dir;
  write_file(dir.file("base.img"), std::string(4096, '\0'));
  doubles::FakeProcessRunner runner;
  runner.answer_next(0, info_json(kGiB, "raw"));
  Disks disks(runner);
  try {
    disks.create_overlay(dir.file("base.img"), dir.file("disk.qcow2"));
    FAIL() << "no error";
  } catch (const DiskError& e) {
    EXPECT_THAT(e.what(), HasSubstr("base.img is raw, not qcow2: convert it with qemu-img "
                                    "convert -O qcow2"));
  }
  EXPECT_EQ(runner.calls.size(), 1u);
  EXPECT_FALSE(fs::exists(dir.file("disk.qcow2")));
}

TEST(DisksArgv, AMissingBaseIsNamed) {
  TempDir dir;
  doubles::FakeProcessRunner runner;
  Disks disks(runner);
  try {
    disks.create_overlay(dir.file("gone.qcow2"), dir.file("disk.qcow2"));
    FAIL() << "no error";
  } catch (const DiskError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot open " + dir.file("gone.qcow2")));
  }
  EXPECT_FALSE(fs::exists(dir.file("disk.qcow2")));
}

TEST(DisksArgv, QemuImgFailuresCarryItsMessage) {
  doubles::FakeProcessRunner runner;
  runner.answer_next(1, "",
                     "qemu-img: Could not open '/b/base.qcow2': No such file or directory\n");
  Disks disks(runner);
  try {
    disks.info("/b/base.qcow2");
    FAIL() << "no error";
  } catch (const DiskError& e) {
    EXPECT_THAT(e.what(), HasSubstr("qemu-img info -U --output=json /b/base.qcow2 failed: "
                                    "qemu-img: Could not open"));
  }
  EXPECT_EQ(runner.timeouts.front(), std::chrono::milliseconds(120000));
  doubles::FakeProcessRunner slow;
  slow.next.push_back({137, "", "", true});
  Disks slow_disks(slow);
  EXPECT_THROW(slow_disks.info("/x"), DiskError);
  doubles::FakeProcessRunner garbled;
  garbled.answer_next(0, "not json");
  Disks garbled_disks(garbled);
  EXPECT_THROW(garbled_disks.info("/x"), DiskError);
}

TEST(DisksArgv, GrowNeverShrinks) {
  TempDir dir;
  write_qcow2_overlay(dir.file("disk.qcow2"), "/b/base.qcow2", "qcow2", 10 * kGiB);
  doubles::FakeProcessRunner runner;
  Disks disks(runner, {"/usr/bin/qemu-img", 5s});
  EXPECT_FALSE(disks.grow(dir.file("disk.qcow2"), 5 * kGiB));
  EXPECT_FALSE(disks.grow(dir.file("disk.qcow2"), 10 * kGiB));
  EXPECT_TRUE(runner.calls.empty());  // the size came from the header
  EXPECT_TRUE(disks.grow(dir.file("disk.qcow2"), 12 * kGiB + 1));
  ASSERT_EQ(runner.calls.size(), 1u);
  EXPECT_EQ(runner.calls[0], (Argv{"/usr/bin/qemu-img", "resize", "-f", "qcow2",
                                   dir.file("disk.qcow2"), std::to_string(12 * kGiB + 512)}));
  EXPECT_EQ(runner.timeouts[0], 5000ms);
}

TEST(DisksArgv, InfoReadsTheBackingFile) {
  doubles::FakeProcessRunner runner;
  runner.answer_next(0, R"({"virtual-size": 67108864, "format": "qcow2",
      "backing-filename": "/b/base.qcow2", "backing-filename-format": "qcow2"})");
  Disks disks(runner);
  const auto info = disks.info("/o/disk.qcow2");
  EXPECT_EQ(info.virtual_size, 64 * kMiB);
  EXPECT_EQ(info.format, "qcow2");
  EXPECT_EQ(info.backing_file, "/b/base.qcow2");
  EXPECT_EQ(info.backing_format, "qcow2");
}

// The real qemu-img on real files.
class RealDisks : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto made =
        runner_.run({"qemu-img", "create", "-f", "qcow2", dir_.file("base.qcow2"), "64M"}, 30s);
    ASSERT_EQ(made.exit_code, 0) << made.err;
  }
  TempDir dir_;
  util::SystemProcessRunner runner_;
  Disks disks_{runner_};
};

TEST_F(RealDisks, AnOverlayRecordsItsAbsoluteBackingFileAndFormat) {
  disks_.create_overlay(dir_.file("base.qcow2"), dir_.file("disk.qcow2"));
  const auto info = disks_.info(dir_.file("disk.qcow2"));
  EXPECT_EQ(info.format, "qcow2");
  EXPECT_EQ(info.virtual_size, 64 * kMiB);
  EXPECT_EQ(info.backing_file, dir_.file("base.qcow2"));
  EXPECT_EQ(info.backing_format, "qcow2");
  EXPECT_EQ(disks_.info(dir_.file("base.qcow2")).backing_file, std::nullopt);
}

TEST_F(RealDisks, AnOverlayGrowsToTheRequestedSize) {
  disks_.create_overlay(dir_.file("base.qcow2"), dir_.file("disk.qcow2"), kGiB);
  const auto info = disks_.info(dir_.file("disk.qcow2"));
  EXPECT_EQ(info.virtual_size, kGiB);
  EXPECT_EQ(info.backing_format, "qcow2");
  EXPECT_EQ(disks_.info(dir_.file("base.qcow2")).virtual_size, 64 * kMiB);  // base untouched

  EXPECT_FALSE(disks_.grow(dir_.file("disk.qcow2"), 512 * kMiB));
  EXPECT_TRUE(disks_.grow(dir_.file("disk.qcow2"), 2 * kGiB));
  EXPECT_EQ(disks_.info(dir_.file("disk.qcow2")).virtual_size, 2 * kGiB);
}

TEST_F(RealDisks, ASizeBelowTheBaseIsRefusedAndNothingIsMade) {
  EXPECT_THROW(disks_.create_overlay(dir_.file("base.qcow2"), dir_.file("disk.qcow2"), 32 * kMiB),
               DiskError);
  EXPECT_FALSE(fs::exists(dir_.file("disk.qcow2")));
}

TEST_F(RealDisks, AnExistingDiskIsNeverOverwritten) {
  write_file(dir_.file("disk.qcow2"), "precious");
  EXPECT_THROW(disks_.create_overlay(dir_.file("base.qcow2"), dir_.file("disk.qcow2")), DiskError);
  EXPECT_EQ(read_file(dir_.file("disk.qcow2")), "precious");
}

TEST_F(RealDisks, AFailedCreateLeavesNoFile) {
  // The overlay's directory does not exist: the write fails after the base was read.
  EXPECT_THROW(disks_.create_overlay(dir_.file("base.qcow2"), dir_.file("nodir/disk.qcow2")),
               DiskError);
  EXPECT_FALSE(fs::exists(dir_.file("nodir")));
}

// Hostile base images: each would make QEMU open a file (or a server) the image names
// (ctest -L security).
using security_disks = RealDisks;

TEST_F(security_disks, ABaseThatPointsAtAnotherFileIsRefusedBeforeAnythingIsMade) {
  // A "cloud image" whose backing file is a file of this host.
  write_file(dir_.file("secret"), "host secret");
  auto made = runner_.run({"qemu-img", "create", "-q", "-f", "qcow2", "-b", dir_.file("secret"),
                           "-F", "raw", dir_.file("backed.qcow2"), "64M"},
                          30s);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  try {
    disks_.create_overlay(dir_.file("backed.qcow2"), dir_.file("disk.qcow2"));
    FAIL() << "a base with a backing file was accepted";
  } catch (const DiskError& e) {
    EXPECT_THAT(e.what(), HasSubstr("has a backing file (" + dir_.file("secret") + ")"));
    EXPECT_THAT(e.what(), HasSubstr("qemu-img convert -O qcow2"));
  }
  EXPECT_FALSE(fs::exists(dir_.file("disk.qcow2")));

  // One that keeps its data in an external file.
  made = runner_.run({"qemu-img", "create", "-q", "-f", "qcow2", "-o",
                      "data_file=" + dir_.file("data.raw"), dir_.file("external.qcow2"), "64M"},
                     30s);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  try {
    disks_.create_overlay(dir_.file("external.qcow2"), dir_.file("disk.qcow2"));
    FAIL() << "a base with an external data file was accepted";
  } catch (const DiskError& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("keeps its data in an external file (" + dir_.file("data.raw") + ")"));
  }
  EXPECT_FALSE(fs::exists(dir_.file("disk.qcow2")));
}

}  // namespace
}  // namespace bowline::image::test
