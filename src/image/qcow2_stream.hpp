// A standalone qcow2 written front to back in one pass, for exports that stream.
// `qemu-img convert` cannot write qcow2 (or even raw) to a pipe: it seeks and truncates. Here
// the layout is computed up front from which guest clusters hold data (`qemu-img map` of the
// whole backing chain), so every table comes before the data: header, L1, refcount table,
// refcount blocks, L2 tables, then each allocated cluster in guest order. Its size is known
// before the first byte (a tar header needs it), and no temporary copy is ever made.
//
// A guest cluster the chain holds compressed (cloud images ship most of theirs so) is copied
// as it is stored, not inflated: its bytes as the source file holds them, at a 512-byte
// boundary of its own, under a compressed L2 descriptor, as `qemu-img convert -c` would have
// written it. That is less to read, hash, send and write, and no inflating at all.
//
//   Qcow2StreamLayout layout(virtual_size, data_extents, stored_clusters);
//   sink(layout.metadata());                // everything before the data
//   for (const auto& piece : layout.pieces())  // in file order, at piece.at past metadata()
//     ... zeros up to piece.at, then the guest cluster (plain) or its stored bytes and zeros
//     up to piece.size() (compressed)
//   ... zeros up to layout.file_size()
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bowline::image {

constexpr std::uint64_t kQcow2StreamCluster = 64 * 1024;

// A guest byte range that holds data (anything else reads as zeros).
struct Extent {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  bool operator==(const Extent&) const = default;
};

// A guest cluster kept compressed: its stream spans `sectors` 512-byte sectors.
struct StoredCluster {
  std::uint64_t cluster = 0;
  std::uint32_t sectors = 0;
  bool operator==(const StoredCluster&) const = default;
};

class Qcow2StreamLayout {
 public:
  // `stored`: guest clusters (ascending) to copy compressed; those without data are ignored.
  Qcow2StreamLayout(std::uint64_t virtual_size, const std::vector<Extent>& data,
                    const std::vector<StoredCluster>& stored = {});

  // One guest cluster's place in the data that follows metadata(), in file order.
  struct Piece {
    std::uint64_t cluster = 0;  // the guest's
    std::uint64_t at = 0;       // bytes past the end of metadata()
    std::uint32_t sectors = 0;  // 0: the plain cluster; else its stored compressed bytes
    std::uint64_t size() const { return sectors ? sectors * 512ULL : kQcow2StreamCluster; }
  };

  std::uint64_t virtual_size() const { return virtual_size_; }
  // The qcow2 file's size in bytes (whole clusters).
  std::uint64_t file_size() const { return total_clusters_ * kQcow2StreamCluster; }
  // The bytes before the first data cluster: header and every table.
  std::string metadata() const;
  const std::vector<Piece>& pieces() const { return pieces_; }
  // Guest cluster numbers with data, ascending.
  const std::vector<std::uint64_t>& data_clusters() const { return clusters_; }
  const std::vector<StoredCluster>& stored() const { return stored_; }

 private:
  std::uint64_t virtual_size_ = 0;
  std::vector<std::uint64_t> clusters_;   // guest cluster numbers with data, ascending
  std::vector<StoredCluster> stored_;     // those of clusters_ kept compressed
  std::vector<Piece> pieces_;             // one per cluster of clusters_, same order
  std::uint64_t data_clusters_ = 0;       // file clusters the pieces take
  std::vector<std::uint64_t> l2_tables_;  // L1 indexes that have an L2 table, ascending
  std::uint64_t l1_entries_ = 0, l1_clusters_ = 0;
  std::uint64_t refcount_table_clusters_ = 0, refcount_blocks_ = 0;
  std::uint64_t total_clusters_ = 0;
};

// The data extents `qemu-img map --output=json` reports (entries with "data": true).
std::vector<Extent> data_extents_from_map(const std::string& map_json);

}  // namespace bowline::image
