// Export and import: the archive's framing and manifest, the streamed qcow2 against
// qemu-img's own reading of it, and a corrupted or cut archive refused. Suite names are
// lowercase so that `ctest -R export` runs them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "engine/disk_read_ahead.hpp"
#include "engine/space_archive.hpp"
#include "engine/space_export.hpp"
#include "image/chain_reader.hpp"
#include "image/errors.hpp"
#include "image/nbd_image.hpp"
#include "image/qcow2_stream.hpp"
#include "util/process.hpp"

namespace bowline::engine {
namespace {

namespace fs = std::filesystem;
using archive::ArchiveError;
using archive::ArchiveReader;
using archive::ArchiveWriter;

// A read-ahead of a disk's clusters as the export once used it: runs of consecutive clusters
// of at most `max_run` bytes, one reader thread per view in `disks`, the last cluster
// zero-padded past the disk's end.
std::unique_ptr<DiskReadAhead> read_ahead(const std::vector<image::GuestReader*>& disks,
                                          const std::vector<std::uint64_t>& clusters,
                                          std::uint64_t cluster, std::uint64_t max_run,
                                          std::size_t depth, DiskReadAhead::OnRead on_read = {}) {
  std::vector<std::uint64_t> first, sizes;
  const auto most = std::max<std::uint64_t>(max_run / cluster, 1);
  for (std::size_t i = 0; i < clusters.size();) {
    std::uint64_t run = 1;
    while (i + run < clusters.size() && clusters[i + run] == clusters[i] + run && run < most) ++run;
    first.push_back(clusters[i]);
    sizes.push_back(run * cluster);
    i += run;
  }
  return std::make_unique<DiskReadAhead>(
      disks.size(), sizes,
      [disks, cluster, first](std::size_t reader, std::size_t run, char* out, std::size_t size) {
        auto& disk = *disks[reader];
        const auto offset = first[run] * cluster;
        std::uint64_t readable = 0;
        if (offset < disk.size()) {
          readable = std::min<std::uint64_t>(size, disk.size() - offset);
          disk.read(offset, out, static_cast<std::uint32_t>(readable));
        }
        std::fill(out + readable, out + size, '\0');
      },
      depth, std::move(on_read));
}

std::string sample_archive(const std::string& disk) {
  std::string out;
  ArchiveWriter writer([&](std::string_view b) { out.append(b); }, 1700000000);
  writer.add(archive::kSpaceMember, R"({"identity": {}})");
  writer.add(archive::kTemplateMember, "image: tiny\n");
  writer.begin(archive::kDiskMember, disk.size());
  writer.write(std::string_view(disk).substr(0, disk.size() / 2));
  writer.write(std::string_view(disk).substr(disk.size() / 2));
  writer.end();
  writer.finish();
  return out;
}

std::string read_back(const std::string& bytes, std::size_t piece = 1000) {
  std::string disk;
  ArchiveReader reader([&](std::string_view b) { disk.append(b); });
  for (std::size_t at = 0; at < bytes.size(); at += piece)
    reader.feed(std::string_view(bytes).substr(at, piece));
  reader.finish();
  return disk;
}

std::string error_of(const std::string& bytes) {
  try {
    read_back(bytes);
  } catch (const ArchiveError& e) {
    return e.what();
  }
  return "";
}

TEST(export_archive, RoundTripsInPiecesOfAnySizeAndKnowsItsSizeUpFront) {
  const std::string disk(100000, 'x');
  const auto bytes = sample_archive(disk);
  EXPECT_EQ(bytes.size() % 512, 0u);
  EXPECT_EQ(bytes.size(), archive::archive_size({{archive::kSpaceMember, 16, ""},
                                                 {archive::kTemplateMember, 12, ""},
                                                 {archive::kDiskMember, disk.size(), ""}}));
  for (std::size_t piece : {1u, 511u, 512u, 4096u, 1u << 20})
    EXPECT_EQ(read_back(bytes, piece), disk);
}

TEST(export_archive, GnuTarReadsItAndSha256sumAgrees) {
  if (std::system("command -v tar >/dev/null") != 0) GTEST_SKIP() << "no tar";
  char pattern[] = "/tmp/bowline-export-tar.XXXXXX";
  const fs::path dir = mkdtemp(pattern);
  const std::string disk(70000, 'd');
  std::ofstream(dir / "a.tar", std::ios::binary) << sample_archive(disk);
  ASSERT_EQ(std::system(("cd " + dir.string() + " && tar xf a.tar").c_str()), 0);
  EXPECT_EQ(fs::file_size(dir / "disk.qcow2"), disk.size());
  std::ifstream manifest(dir / "manifest.json");
  const std::string text((std::istreambuf_iterator<char>(manifest)), {});
  EXPECT_NE(text.find("\"bowline-space-archive\""), std::string::npos);
  fs::remove_all(dir);
}

TEST(export_archive, ACorruptedOrCutArchiveIsRefusedNamingTheRule) {
  const std::string disk(100000, 'x');
  const auto good = sample_archive(disk);
  auto flipped = good;
  flipped[512 * 3 + 5000] ^= 1;  // inside disk.qcow2
  EXPECT_NE(error_of(flipped).find("disk.qcow2 does not match its SHA-256"), std::string::npos)
      << error_of(flipped);
  EXPECT_NE(error_of(good.substr(0, good.size() / 2)).find("cut short"), std::string::npos);
  auto header = good;
  header[10] ^= 1;  // a header's name: its checksum no longer matches
  EXPECT_NE(error_of(header).find("checksum"), std::string::npos) << error_of(header);
  EXPECT_NE(error_of(std::string(1024, '\0')).find("no manifest.json"), std::string::npos);
  auto trailing = good + std::string(512, 'j');
  EXPECT_NE(error_of(trailing).find("after its end"), std::string::npos);
}

// Exports `disk` through SpaceArchiveStream (its qemu-nbd under `dir`) and writes the
// archive's disk member to `out`.
void export_disk(image::Disks& disks, const fs::path& disk, const fs::path& dir,
                 const fs::path& out) {
  SpaceArchiveStream stream(ExportSource{"{}\n", "image: x\n", disk, "t"}, disks, 0);
  std::string archive_bytes;
  stream.run(dir / "nbd", [&](std::string_view b) {
    archive_bytes.append(b);
    return true;
  });
  EXPECT_EQ(archive_bytes.size(), stream.size());
  std::ofstream(out, std::ios::binary) << read_back(archive_bytes, 1 << 20);
}

// The streamed qcow2 of a two-level chain reads back as the chain does, and qemu-img finds no
// fault in it.
TEST(export_archive, TheStreamedQcow2IsStandaloneAndEqualsTheChain) {
  if (std::system("command -v qemu-nbd >/dev/null && command -v qemu-io >/dev/null") != 0)
    GTEST_SKIP() << "no qemu-nbd or qemu-io";
  char pattern[] = "/tmp/bowline-export-qcow2.XXXXXX";
  const fs::path dir = mkdtemp(pattern);
  const auto base = dir / "base.qcow2", top = dir / "top.qcow2", out = dir / "out.qcow2";
  const auto sh = [&](const std::string& command) {
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  };
  // 600 MiB + 3 KiB: data past the first L2 table's 512 MiB, and a tail that ends inside a
  // cluster.
  sh("qemu-img create -q -f qcow2 " + base.string() + " 600M");
  sh("qemu-io -f qcow2 -c 'write -P 0xab 1M 192k' -c 'write -P 0x11 530M 64k' " + base.string() +
     " >/dev/null");
  sh("qemu-img create -q -f qcow2 -b " + base.string() + " -F qcow2 " + top.string() +
     " 629148672");  // 600 MiB + 3 KiB
  sh("qemu-io -f qcow2 -c 'write -P 0xcd 1088k 64k' -c 'write -P 0xee 629145600 3072' " +
     top.string() + " >/dev/null");

  util::SystemProcessRunner runner;
  image::Disks disks(runner);
  export_disk(disks, top, dir, out);
  EXPECT_FALSE(disks.info(out).backing_file.has_value());
  EXPECT_EQ(disks.info(out).virtual_size, 629148672u);
  sh("qemu-img check -q " + out.string());
  sh("qemu-img compare -q " + top.string() + " " + out.string());
  // Only the clusters with data are in it: far below the 600 MiB the guest sees.
  EXPECT_LT(fs::file_size(out), 2u << 20);
  fs::remove_all(dir);
}

// A compressed base (as cloud images ship) under an overlay: the clusters only the base holds
// go into the export as they are stored, compressed; one the overlay covers in part
// (subclusters) or in whole is read as the guest sees it. qemu-img finds the result
// consistent and equal to the chain; with a base whose clusters are not 64 KiB nothing is
// kept compressed and the result is still equal.
TEST(export_archive, TheStreamedQcow2KeepsCompressedClustersAsTheyAreStored) {
  if (std::system("command -v qemu-nbd >/dev/null && command -v qemu-io >/dev/null") != 0)
    GTEST_SKIP() << "no qemu-nbd or qemu-io";
  for (const std::string base_options : {"", "-o cluster_size=4k"}) {
    char pattern[] = "/tmp/bowline-export-stored.XXXXXX";
    const fs::path dir = mkdtemp(pattern);
    const auto plain = dir / "plain.qcow2", base = dir / "base.qcow2", top = dir / "top.qcow2",
               out = dir / "out.qcow2";
    const auto sh = [&](const std::string& command) {
      ASSERT_EQ(std::system(command.c_str()), 0) << command;
    };
    // Repeating bytes (compressed), random ones (kept plain by qemu-img: they do not shrink),
    // and a cluster that is half of each.
    sh("qemu-img create -q -f qcow2 " + plain.string() + " 6M");
    // Then 16 clusters that each shrink to about 20 KB: stored pieces that straddle the
    // output's cluster boundaries.
    sh("head -c 300000 /dev/urandom > " + (dir / "random").string() +
       " && head -c 40000 /dev/urandom > " + (dir / "half").string() +
       " && for i in $(seq 16); do head -c 20000 /dev/urandom; head -c 45536 /dev/zero; done > " +
       (dir / "fifth").string());
    sh("qemu-io -f qcow2 -c 'write -P 0x5a 0 1M' -c 'write -P 0x21 3M 512k' -c 'write -s " +
       (dir / "random").string() + " 1500k 300000' -c 'write -s " + (dir / "half").string() +
       " 4M 40000' -c 'write -s " + (dir / "fifth").string() + " 2M 1M' " + plain.string() +
       " >/dev/null");
    sh("qemu-img convert -q -c -O qcow2 " + base_options + " " + plain.string() + " " +
       base.string());
    // 2 KiB subclusters: 4 KiB written into cluster 1 leaves the rest of it to the base.
    sh("qemu-img create -q -f qcow2 -o extended_l2=on -b " + base.string() + " -F qcow2 " +
       top.string() + " 8M");
    sh("qemu-io -f qcow2 -c 'write -P 0xc3 72k 4k' -c 'write -P 0x44 3M 64k' -c 'write -P 0x77 "
       "7M 100k' " +
       top.string() + " >/dev/null");

    util::SystemProcessRunner runner;
    image::Disks disks(runner);
    const auto map = image::map_entries(disks.map_json(top));
    image::ChainReader tables(map, image::chain_images(disks.chain_json(top)));
    std::vector<std::uint64_t> stored;
    for (const auto& s : tables.stored_clusters(image::kQcow2StreamCluster))
      stored.push_back(s.cluster);
    const auto kept = [&](std::uint64_t c) {
      return std::find(stored.begin(), stored.end(), c) != stored.end();
    };
    if (base_options.empty()) {
      EXPECT_TRUE(kept(0) && kept(15)) << "the base's repeating clusters";
      EXPECT_TRUE(kept(32) && kept(47)) << "the base's partly random clusters";
      EXPECT_FALSE(kept(1)) << "covered in part by the overlay";
      EXPECT_FALSE(kept(48)) << "covered in whole by the overlay";
      EXPECT_FALSE(kept(24)) << "random: stored plain in the base";
    } else {
      EXPECT_TRUE(stored.empty()) << "4 KiB clusters cannot be 64 KiB ones";
    }

    export_disk(disks, top, dir, out);
    EXPECT_FALSE(disks.info(out).backing_file.has_value());
    sh("qemu-img check -q " + out.string());
    sh("qemu-img compare -q " + top.string() + " " + out.string());
    const image::Qcow2StreamLayout unpacked(8u << 20, image::data_extents(map));
    if (base_options.empty())  // far less than every data cluster written plain
      EXPECT_LT(fs::file_size(out), unpacked.file_size() - 16 * image::kQcow2StreamCluster);
    else
      EXPECT_EQ(fs::file_size(out), unpacked.file_size());
    fs::remove_all(dir);
  }
}

// The read-ahead gives the runs in order and stops cleanly when its reader is abandoned
// halfway (the export's client went away), with more runs than it may hold waiting.
TEST(export_archive, ReadAheadGivesRunsInOrderAndStopsWhenAbandoned) {
  if (std::system("command -v qemu-nbd >/dev/null && command -v qemu-io >/dev/null") != 0)
    GTEST_SKIP() << "no qemu-nbd or qemu-io";
  char pattern[] = "/tmp/bowline-read-ahead.XXXXXX";
  const fs::path dir = mkdtemp(pattern);
  const auto disk = dir / "disk.qcow2";
  ASSERT_EQ(std::system(("qemu-img create -q -f qcow2 " + disk.string() + " 8M").c_str()), 0);
  // Clusters 0-3 hold 0x01, 8-9 hold 0x02: two runs of at most 2 clusters' worth, and a gap.
  ASSERT_EQ(std::system(("qemu-io -f qcow2 -c 'write -P 0x01 0 256k' -c 'write -P 0x02 512k "
                         "128k' " +
                         disk.string() + " >/dev/null")
                            .c_str()),
            0);
  const std::uint64_t C = 64 * 1024;
  const std::vector<std::uint64_t> clusters{0, 1, 2, 3, 8, 9};
  {
    image::NbdImage nbd(disk, dir / "nbd");
    auto runs_of = read_ahead({&nbd}, clusters, C, 2 * C, 1);
    auto& runs = *runs_of;
    std::vector<std::pair<std::size_t, char>> seen;
    while (auto run = runs.next()) seen.emplace_back(run->bytes.size(), run->bytes.front());
    EXPECT_EQ(seen,
              (std::vector<std::pair<std::size_t, char>>{{2 * C, 1}, {2 * C, 1}, {2 * C, 2}}));
  }
  {
    image::NbdImage nbd(disk, dir / "nbd2");
    auto runs_of = read_ahead({&nbd}, clusters, C, C, 1);
    auto& runs = *runs_of;
    ASSERT_TRUE(runs.next());
    // Destroyed here with its reader waiting for room: it must end, not hang.
  }
  fs::remove_all(dir);
}

// A disk whose every byte is its cluster's number, slow at random, so that readers finish
// out of order; it fails when asked for `fail_at`.
class SlowDisk : public image::GuestReader {
 public:
  SlowDisk(std::uint64_t cluster, unsigned seed, std::uint64_t fail_at = UINT64_MAX)
      : cluster_(cluster), seed_(seed), fail_at_(fail_at) {}
  std::uint64_t size() const override { return 64 * cluster_; }
  void read(std::uint64_t offset, char* out, std::uint32_t length) override {
    if (offset == fail_at_) throw image::DiskError("no disk at " + std::to_string(offset));
    seed_ = seed_ * 1103515245 + 12345;
    std::this_thread::sleep_for(std::chrono::microseconds((seed_ >> 16) % 3000));
    for (std::uint32_t i = 0; i < length; ++i) out[i] = static_cast<char>((offset + i) / cluster_);
  }

 private:
  std::uint64_t cluster_;
  unsigned seed_;
  std::uint64_t fail_at_;
};

// Three readers, finishing out of order: runs come out in order, and on_read sees them in
// order too (what the archive's hash needs); a reader's error reaches next().
TEST(export_archive, ReadersOfOneDiskHandRunsOutInOrder) {
  const std::uint64_t C = 4096;
  std::vector<std::uint64_t> clusters;
  for (std::uint64_t c = 0; c < 64; ++c)
    if (c % 7 != 3) clusters.push_back(c);  // runs broken by gaps
  for (int round = 0; round < 5; ++round) {
    SlowDisk a(C, 1 + round), b(C, 7 + round), c(C, 13 + round);
    std::vector<char> hashed;
    auto runs_of =
        read_ahead({&a, &b, &c}, clusters, C, 3 * C, 2, [&](const char* bytes, std::size_t size) {
          for (std::size_t i = 0; i < size; i += C) hashed.push_back(bytes[i]);
        });
    auto& runs = *runs_of;
    std::vector<char> seen;
    while (auto run = runs.next())
      for (std::size_t i = 0; i < run->bytes.size(); i += C) seen.push_back(run->bytes[i]);
    std::vector<char> expected;
    for (auto cluster : clusters) expected.push_back(static_cast<char>(cluster));
    EXPECT_EQ(seen, expected) << "round " << round;
    EXPECT_EQ(hashed, expected) << "round " << round;
  }
  SlowDisk a(C, 3, 20 * C), b(C, 5, 20 * C);  // whichever reader gets that run
  auto failing_of = read_ahead({&a, &b}, clusters, C, C, 2);
  auto& failing = *failing_of;
  try {
    while (failing.next()) {
    }
    FAIL() << "the reader's error was lost";
  } catch (const image::DiskError& e) {
    EXPECT_NE(std::string(e.what()).find("no disk at"), std::string::npos);
  }
}

// A disk of `size` bytes, each 0xab.
class FullDisk : public image::GuestReader {
 public:
  explicit FullDisk(std::uint64_t size) : size_(size) {}
  std::uint64_t size() const override { return size_; }
  void read(std::uint64_t, char* out, std::uint32_t length) override {
    std::memset(out, 0xab, length);
  }

 private:
  std::uint64_t size_;
};

// Runs given back are used again, and a reused buffer's old bytes do not leak into the
// padding past the disk's end. Which run gets which buffer depends on the threads' timing, so
// rounds are repeated until the last run was read into a buffer given back (a buffer still
// held, so the same address is the same buffer).
TEST(export_archive, RecycledRunsArePaddedWithZerosPastTheDisksEnd) {
  const std::uint64_t C = 4096;
  FullDisk disk(10 * C + 100);
  std::vector<std::uint64_t> clusters;
  for (std::uint64_t c = 0; c <= 10; ++c) clusters.push_back(c);
  bool reused = false;
  for (int round = 0; round < 50 && !reused; ++round) {
    auto runs_of = read_ahead({&disk}, clusters, C, C, 1);  // 11 runs of one cluster
    auto& runs = *runs_of;
    std::vector<const char*> buffers;
    std::string last;
    while (auto run = runs.next()) {
      buffers.push_back(run->bytes.data());
      last.assign(run->bytes.begin(), run->bytes.end());
      runs.recycle(std::move(*run));
    }
    ASSERT_EQ(buffers.size(), 11u);
    ASSERT_EQ(last.size(), C);
    EXPECT_EQ(last.substr(0, 100), std::string(100, '\xab'));
    EXPECT_EQ(last.substr(100), std::string(C - 100, '\0')) << "round " << round;
    reused = std::find(buffers.begin(), buffers.end() - 1, buffers.back()) != buffers.end() - 1;
  }
  EXPECT_TRUE(reused) << "no run was ever read into a buffer given back";
}

TEST(export_archive, LayoutOfAnEmptyDiskIsAValidImage) {
  image::Qcow2StreamLayout layout(1 << 30, {});
  EXPECT_TRUE(layout.data_clusters().empty());
  EXPECT_EQ(layout.metadata().size(), layout.file_size());
  EXPECT_EQ(layout.metadata().substr(0, 4), "QFI\xfb");
}

}  // namespace
}  // namespace bowline::engine
