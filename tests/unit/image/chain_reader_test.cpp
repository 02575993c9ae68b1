// The chain reader against QEMU's own reading of the same chain (qemu-nbd): every byte the
// same, the plain clusters read from the files, the zlib-compressed ones (as cloud images ship
// them) inflated by bowline, zstd ones from qemu-nbd; and qemu-img's map and chain parsed as
// they are.
#include "image/chain_reader.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "image/errors.hpp"
#include "image/nbd_image.hpp"
#include "image/overlay.hpp"
#include "util/process.hpp"

namespace bowline::image {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(MapEntries, TakesOffsetsDepthsAndZeroesAsQemuImgGivesThem) {
  const auto entries = map_entries(R"([
    {"start": 0, "length": 65536, "depth": 0, "present": true, "zero": false, "data": true, "offset": 327680},
    {"start": 65536, "length": 131072, "depth": 1, "present": true, "zero": false, "data": true},
    {"start": 196608, "length": 65536, "depth": 0, "present": true, "zero": true, "data": false, "offset": 9437184},
    {"start": 262144, "length": 1048576, "depth": 2, "present": false, "zero": true, "data": false}])");
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0], (MapEntry{0, 65536, 0, true, false, 327680}));
  EXPECT_EQ(entries[1], (MapEntry{65536, 131072, 1, true, false, std::nullopt}));
  EXPECT_EQ(entries[2], (MapEntry{196608, 65536, 0, false, true, 9437184}));
  EXPECT_EQ(entries[3].depth, 2);
}

TEST(MapEntries, RefusesWhatItCannotTrust) {
  EXPECT_THROW(map_entries("{}"), DiskError);
  EXPECT_THROW(map_entries(R"([{"length": 5}])"), DiskError);
  try {
    map_entries(R"([{"start": 0, "length": 100}, {"start": 50, "length": 100}])");
    FAIL() << "overlapping ranges taken";
  } catch (const DiskError& e) {
    EXPECT_THAT(e.what(), HasSubstr("overlapping"));
  }
}

TEST(ChainImages, KnowsWhatCannotBeReadInPlace) {
  const auto chain = chain_images(R"([
    {"filename": "/a/top.qcow2", "format": "qcow2", "format-specific": {"type": "qcow2", "data": {"compat": "1.1"}}},
    {"filename": "/a/lock.qcow2", "format": "qcow2", "encrypted": true},
    {"filename": "/a/ext.qcow2", "format": "qcow2", "format-specific": {"type": "qcow2", "data": {"data-file": "/a/ext.raw"}}},
    {"filename": "/a/base.raw", "format": "raw"},
    {"filename": "/a/old.vmdk", "format": "vmdk"}])");
  ASSERT_EQ(chain.size(), 5u);
  EXPECT_EQ(chain[0].file, "/a/top.qcow2");
  EXPECT_TRUE(chain[0].readable_in_place());
  EXPECT_FALSE(chain[1].readable_in_place());
  EXPECT_FALSE(chain[2].readable_in_place());
  EXPECT_TRUE(chain[3].readable_in_place());
  EXPECT_FALSE(chain[4].readable_in_place());
  EXPECT_THROW(chain_images("[]"), DiskError);
}

// A compressed base (made with `base_options`) under a plain overlay, read whole in uneven
// pieces by the chain reader and by qemu-nbd. Returns the reader's counters.
struct Counts {
  std::uint64_t in_place = 0, inflated = 0, fallback = 0;
};
Counts read_like_qemu(const std::string& base_options) {
  char pattern[] = "/tmp/bowline-chain-reader.XXXXXX";
  const fs::path dir = mkdtemp(pattern);
  const auto sh = [&](const std::string& command) {
    if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
  };
  const auto plain = dir / "plain.qcow2", base = dir / "base.qcow2", top = dir / "top.qcow2";
  sh("qemu-img create -q -f qcow2 " + plain.string() + " 6M");
  // Repeating and random bytes (a random cluster compresses to more than a cluster: qemu-img
  // keeps it plain), with a cluster that is half of each.
  sh("qemu-io -f qcow2 -c 'write -P 0x5a 0 1M' -c 'write -P 0x21 3M 512k' " + plain.string() +
     " >/dev/null");
  sh("head -c 300000 /dev/urandom > " + (dir / "random").string() + " && qemu-io -f qcow2 -c " +
     "'write -s " + (dir / "random").string() + " 1500k 300000' " + plain.string() + " >/dev/null");
  sh("head -c 40000 /dev/urandom > " + (dir / "half").string() + " && qemu-io -f qcow2 -c " +
     "'write -s " + (dir / "half").string() + " 4M 40000' " + plain.string() + " >/dev/null");
  sh("qemu-img convert -q -c -O qcow2 " + base_options + " " + plain.string() + " " +
     base.string());
  sh("qemu-img create -q -f qcow2 -b " + base.string() + " -F qcow2 " + top.string() + " 8M");
  // Over part of the base, past its end, and a zeroed range with its clusters kept.
  sh("qemu-io -f qcow2 -c 'write -P 0xc3 512k 1M' -c 'write -P 0x77 7M 300k' -c 'write -P 0x44 "
     "5M 256k' -c 'write -z 5M 128k' " +
     top.string() + " >/dev/null");

  util::SystemProcessRunner runner;
  Disks disks(runner);
  NbdImage nbd(top, dir / "nbd");
  ChainReader reader(map_entries(disks.map_json(top)), chain_images(disks.chain_json(top)), nbd);
  EXPECT_EQ(reader.size(), 8u << 20);
  std::vector<char> ours(reader.size(), 1), theirs(reader.size(), 2);
  nbd.read(0, theirs.data(), static_cast<std::uint32_t>(theirs.size()));
  for (std::uint64_t at = 0, step = 77777; at < reader.size(); at += step) {
    const auto n = std::min<std::uint64_t>(step, reader.size() - at);
    reader.read(at, ours.data() + at, static_cast<std::uint32_t>(n));
  }
  EXPECT_TRUE(ours == theirs) << "the chain reader and qemu-nbd disagree (" << base_options << ")";
  EXPECT_THROW(reader.read(reader.size() - 10, ours.data(), 11), DiskError);
  fs::remove_all(dir);
  return {reader.bytes_in_place(), reader.bytes_inflated(), reader.bytes_from_fallback()};
}

bool have_qemu_tools() {
  return std::system("command -v qemu-nbd >/dev/null && command -v qemu-io >/dev/null") == 0;
}

// The plain clusters are read from the files, the zlib ones inflated here, nothing asked of
// qemu-nbd; whatever the cluster size (the compressed descriptor's layout depends on it) and
// with extended L2 entries.
TEST(ChainReader, ReadsTheChainAsQemuDoes) {
  if (!have_qemu_tools()) GTEST_SKIP() << "no qemu-nbd or qemu-io";
  for (const std::string options : {"", "-o cluster_size=4k", "-o cluster_size=2M",
                                    "-o compat=0.10", "-o extended_l2=on,cluster_size=128k"}) {
    const auto counts = read_like_qemu(options);
    EXPECT_GE(counts.in_place, 1u << 20) << options;    // the overlay's clusters
    EXPECT_GE(counts.inflated, 512u << 10) << options;  // the base's compressed ones
    EXPECT_EQ(counts.fallback, 0u) << options;
  }
}

// What bowline does not inflate itself, QEMU still reads: the same bytes either way.
TEST(ChainReader, LeavesZstdToQemu) {
  if (!have_qemu_tools()) GTEST_SKIP() << "no qemu-nbd or qemu-io";
  const auto counts = read_like_qemu("-o compression_type=zstd");
  EXPECT_EQ(counts.inflated, 0u);
  EXPECT_GE(counts.fallback, 512u << 10);
}

}  // namespace
}  // namespace bowline::image
