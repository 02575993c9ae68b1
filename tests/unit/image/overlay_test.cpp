// Disks: the exact qemu-img commands through a scripted ProcessRunner, then the same on real
// files with the real qemu-img.
#include "image/overlay.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <filesystem>

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

// Answers with scripted results, in order, and records every argv.
class ScriptedRunner final : public util::ProcessRunner {
 public:
  util::ProcessResult run(const Argv& argv, std::chrono::milliseconds timeout) override {
    calls.push_back(argv);
    timeouts.push_back(timeout);
    if (answers.empty()) return {0, "", "", false};
    auto next = answers.front();
    answers.pop_front();
    return next;
  }
  void answer(int code, std::string out = "", std::string err = "") {
    answers.push_back({code, std::move(out), std::move(err), false});
  }
  std::deque<util::ProcessResult> answers;
  std::vector<Argv> calls;
  std::vector<std::chrono::milliseconds> timeouts;
};

std::string info_json(std::uint64_t size, const std::string& format = "qcow2") {
  return R"({"virtual-size": )" + std::to_string(size) + R"(, "filename": "x", "format": ")" +
         format + R"(", "dirty-flag": false})";
}

TEST(DisksArgv, CreatesAnOverlayWithItsBackingFormatAndNoResizeWithoutASize) {
  ScriptedRunner runner;
  runner.answer(0, info_json(2 * kGiB));
  runner.answer(0);
  Disks disks(runner);
  disks.create_overlay("/images/base/debian.qcow2", "/images/dev/disk.qcow2");
  EXPECT_THAT(
      runner.calls,
      ElementsAre(Argv{"qemu-img", "info", "-U", "--output=json", "/images/base/debian.qcow2"},
                  Argv{"qemu-img", "create", "-f", "qcow2", "-F", "qcow2", "-b",
                       "/images/base/debian.qcow2", "/images/dev/disk.qcow2"}));
  EXPECT_EQ(runner.timeouts.front(), std::chrono::milliseconds(120000));
}

TEST(DisksArgv, GrowsTheOverlayToTheSpecSizeInSectorBytes) {
  ScriptedRunner runner;
  runner.answer(0, info_json(2 * kGiB));
  runner.answer(0);
  runner.answer(0);
  Disks disks(runner, {"/usr/bin/qemu-img", 5s});
  disks.create_overlay("/b/base.qcow2", "/o/disk.qcow2", 20 * kGiB + 1);
  ASSERT_EQ(runner.calls.size(), 3u);
  EXPECT_EQ(runner.calls[2], (Argv{"/usr/bin/qemu-img", "resize", "-f", "qcow2", "/o/disk.qcow2",
                                   std::to_string(20 * kGiB + 512)}));
  EXPECT_EQ(runner.timeouts[2], 5000ms);
}

TEST(DisksArgv, ASizeEqualToTheBaseNeedsNoResize) {
  ScriptedRunner runner;
  runner.answer(0, info_json(2 * kGiB));
  Disks disks(runner);
  disks.create_overlay("/b/base.qcow2", "/o/disk.qcow2", 2 * kGiB);
  EXPECT_EQ(runner.calls.size(), 2u);
}

TEST(DisksArgv, ARelativeBaseIsMadeAbsolute) {
  ScriptedRunner runner;
  runner.answer(0, info_json(kGiB));
  Disks disks(runner);
  disks.create_overlay("base/./x.qcow2", "/o/disk.qcow2");
  const auto expected = (fs::current_path() / "base/x.qcow2").string();
  EXPECT_EQ(runner.calls[0].back(), expected);
  EXPECT_EQ(runner.calls[1][7], expected);
}

TEST(DisksArgv, ASizeBelowTheBaseIsRefusedBeforeAnythingIsMade) {
  ScriptedRunner runner;
  runner.answer(0, info_json(2 * kGiB));
  Disks disks(runner);
  try {
    disks.create_overlay("/b/base.qcow2", "/o/disk.qcow2", kGiB);
    FAIL() << "no error";
  } catch (const DiskError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the disk size 1073741824 bytes (1 GiB) is smaller than the "
                                    "base image's virtual size 2147483648 bytes (2 GiB)"));
  }
  EXPECT_EQ(runner.calls.size(), 1u);  // only the info
}

TEST(DisksArgv, ARawBaseIsRefused) {
  ScriptedRunner runner;
  runner.answer(0, info_json(kGiB, "raw"));
  Disks disks(runner);
  EXPECT_THROW(disks.create_overlay("/b/base.img", "/o/disk.qcow2"), DiskError);
  EXPECT_EQ(runner.calls.size(), 1u);
}

TEST(DisksArgv, QemuImgFailuresCarryItsMessage) {
  ScriptedRunner runner;
  runner.answer(1, "", "qemu-img: Could not open '/b/base.qcow2': No such file or directory\n");
  Disks disks(runner);
  try {
    disks.create_overlay("/b/base.qcow2", "/o/disk.qcow2");
    FAIL() << "no error";
  } catch (const DiskError& e) {
    EXPECT_THAT(e.what(), HasSubstr("qemu-img info -U --output=json /b/base.qcow2 failed: "
                                    "qemu-img: Could not open"));
  }
  ScriptedRunner slow;
  slow.answers.push_back({137, "", "", true});
  Disks slow_disks(slow);
  EXPECT_THROW(slow_disks.info("/x"), DiskError);
  ScriptedRunner garbled;
  garbled.answer(0, "not json");
  Disks garbled_disks(garbled);
  EXPECT_THROW(garbled_disks.info("/x"), DiskError);
}

TEST(DisksArgv, GrowNeverShrinks) {
  ScriptedRunner runner;
  runner.answer(0, info_json(10 * kGiB));
  runner.answer(0, info_json(10 * kGiB));
  runner.answer(0, info_json(10 * kGiB));
  runner.answer(0);
  Disks disks(runner);
  EXPECT_FALSE(disks.grow("/o/disk.qcow2", 5 * kGiB));
  EXPECT_FALSE(disks.grow("/o/disk.qcow2", 10 * kGiB));
  EXPECT_TRUE(disks.grow("/o/disk.qcow2", 12 * kGiB));
  ASSERT_EQ(runner.calls.size(), 4u);
  EXPECT_EQ(runner.calls[3], (Argv{"qemu-img", "resize", "-f", "qcow2", "/o/disk.qcow2",
                                   std::to_string(12 * kGiB)}));
}

TEST(DisksArgv, InfoReadsTheBackingFile) {
  ScriptedRunner runner;
  runner.answer(0, R"({"virtual-size": 67108864, "format": "qcow2",
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
  // The overlay's directory does not exist: qemu-img create fails after info succeeded.
  EXPECT_THROW(disks_.create_overlay(dir_.file("base.qcow2"), dir_.file("nodir/disk.qcow2")),
               DiskError);
  EXPECT_FALSE(fs::exists(dir_.file("nodir")));
}

}  // namespace
}  // namespace bowline::image::test
