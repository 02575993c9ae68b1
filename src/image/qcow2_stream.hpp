// A standalone qcow2 written front to back in one pass, for exports that stream (issue 15).
// `qemu-img convert` cannot write qcow2 (or even raw) to a pipe: it seeks and truncates. Here
// the layout is computed up front from which guest clusters hold data (`qemu-img map` of the
// whole backing chain), so every table comes before the data: header, L1, refcount table,
// refcount blocks, L2 tables, then each allocated cluster in guest order. Its size is known
// before the first byte (a tar header needs it), and no temporary copy is ever made.
//
//   Qcow2StreamLayout layout(virtual_size, data_extents);
//   sink(layout.metadata());                       // everything before the first data cluster
//   for (auto cluster : layout.data_clusters())    // guest cluster numbers, ascending
//     sink(read_guest(cluster * kQcow2StreamCluster, kQcow2StreamCluster));  // zero-padded
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

class Qcow2StreamLayout {
 public:
  Qcow2StreamLayout(std::uint64_t virtual_size, const std::vector<Extent>& data);

  std::uint64_t virtual_size() const { return virtual_size_; }
  // The qcow2 file's size in bytes (whole clusters).
  std::uint64_t file_size() const { return total_clusters_ * kQcow2StreamCluster; }
  // The bytes before the first data cluster: header and every table.
  std::string metadata() const;
  const std::vector<std::uint64_t>& data_clusters() const { return clusters_; }

 private:
  std::uint64_t virtual_size_ = 0;
  std::vector<std::uint64_t> clusters_;   // guest cluster numbers with data, ascending
  std::vector<std::uint64_t> l2_tables_;  // L1 indexes that have an L2 table, ascending
  std::uint64_t l1_entries_ = 0, l1_clusters_ = 0;
  std::uint64_t refcount_table_clusters_ = 0, refcount_blocks_ = 0;
  std::uint64_t total_clusters_ = 0;
};

// The data extents `qemu-img map --output=json` reports (entries with "data": true).
std::vector<Extent> data_extents_from_map(const std::string& map_json);

}  // namespace bowline::image
