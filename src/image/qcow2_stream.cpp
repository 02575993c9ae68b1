#include "image/qcow2_stream.hpp"

#include <algorithm>
#include <stdexcept>

#include "image/chain_reader.hpp"
#include "image/errors.hpp"

namespace bowline::image {

namespace {

constexpr std::uint64_t C = kQcow2StreamCluster;
constexpr std::uint64_t kL2Entries = C / 8;          // 8-byte entries per L2 table
constexpr std::uint64_t kRefcountsPerBlock = C / 2;  // 16-bit refcounts (refcount_order 4)
constexpr std::uint64_t kCopied = 1ULL << 63;        // QCOW_OFLAG_COPIED: refcount is exactly 1
constexpr std::uint64_t kCompressed = 1ULL << 62;    // QCOW_OFLAG_COMPRESSED
constexpr unsigned kSectorsShift = 62 - (16 - 8);    // where a descriptor's sector count starts
constexpr std::uint32_t kMaxSectors = 1u << (16 - 8);

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

void put32(std::string& out, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out[at + i] = static_cast<char>((v >> (24 - 8 * i)) & 0xff);
}
void put64(std::string& out, std::size_t at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[at + i] = static_cast<char>((v >> (56 - 8 * i)) & 0xff);
}

}  // namespace

Qcow2StreamLayout::Qcow2StreamLayout(std::uint64_t virtual_size, const std::vector<Extent>& data,
                                     const std::vector<StoredCluster>& stored)
    : virtual_size_(virtual_size) {
  const std::uint64_t guest_clusters = ceil_div(virtual_size, C);
  for (const auto& e : data) {
    if (e.length == 0) continue;
    const auto end = std::min(e.offset + e.length, virtual_size);
    if (e.offset >= end) continue;
    for (auto c = e.offset / C; c < ceil_div(end, C); ++c)
      if (clusters_.empty() || clusters_.back() < c) clusters_.push_back(c);
  }
  // Extents come sorted from qemu-img; sort anyway so any input gives a valid image.
  std::sort(clusters_.begin(), clusters_.end());
  clusters_.erase(std::unique(clusters_.begin(), clusters_.end()), clusters_.end());
  for (auto c : clusters_)
    if (l2_tables_.empty() || l2_tables_.back() != c / kL2Entries)
      l2_tables_.push_back(c / kL2Entries);
  // The data in guest order: a plain cluster at a cluster boundary, a stored one at the next
  // 512-byte boundary (every piece's size is a whole number of sectors).
  auto sorted = stored;
  std::sort(sorted.begin(), sorted.end(),
            [](const StoredCluster& a, const StoredCluster& b) { return a.cluster < b.cluster; });
  auto next_stored = sorted.begin();
  std::uint64_t at = 0;
  for (auto c : clusters_) {
    while (next_stored != sorted.end() && next_stored->cluster < c) ++next_stored;
    Piece piece{c, 0, 0};
    // A descriptor counts at most 2^(cluster_bits - 8) sectors: 256 for 64 KiB clusters.
    if (next_stored != sorted.end() && next_stored->cluster == c && next_stored->sectors > 0 &&
        next_stored->sectors <= kMaxSectors) {
      piece.sectors = next_stored->sectors;
      stored_.push_back(*next_stored);
    } else {
      at = ceil_div(at, C) * C;
    }
    piece.at = at;
    at += piece.size();
    pieces_.push_back(piece);
  }
  data_clusters_ = ceil_div(at, C);
  l1_entries_ = std::max<std::uint64_t>(1, ceil_div(guest_clusters, kL2Entries));
  l1_clusters_ = ceil_div(l1_entries_ * 8, C);
  // The refcount blocks count every cluster, themselves included: grow until it holds.
  refcount_blocks_ = 1;
  refcount_table_clusters_ = 1;
  for (;;) {
    total_clusters_ = 1 + l1_clusters_ + refcount_table_clusters_ + refcount_blocks_ +
                      l2_tables_.size() + data_clusters_;
    const auto blocks = ceil_div(total_clusters_, kRefcountsPerBlock);
    const auto table = ceil_div(blocks * 8, C);
    if (blocks <= refcount_blocks_ && table <= refcount_table_clusters_) break;
    refcount_blocks_ = std::max(refcount_blocks_, blocks);
    refcount_table_clusters_ = std::max(refcount_table_clusters_, table);
  }
}

std::string Qcow2StreamLayout::metadata() const {
  const std::uint64_t l1_at = 1;
  const std::uint64_t table_at = l1_at + l1_clusters_;
  const std::uint64_t blocks_at = table_at + refcount_table_clusters_;
  const std::uint64_t l2_at = blocks_at + refcount_blocks_;
  const std::uint64_t data_at = l2_at + l2_tables_.size();
  std::string out(data_at * C, '\0');

  // Header, version 3 (compat 1.1), 104 bytes; the zeros after it end the extensions.
  put32(out, 0, 0x514649fb);  // "QFI\xfb"
  put32(out, 4, 3);
  put32(out, 20, 16);  // cluster_bits
  put64(out, 24, virtual_size_);
  put32(out, 36, static_cast<std::uint32_t>(l1_entries_));
  put64(out, 40, l1_at * C);
  put64(out, 48, table_at * C);
  put32(out, 56, static_cast<std::uint32_t>(refcount_table_clusters_));
  put32(out, 96, 4);     // refcount_order: 16-bit refcounts
  put32(out, 100, 104);  // header_length

  for (std::size_t i = 0; i < l2_tables_.size(); ++i)
    put64(out, l1_at * C + l2_tables_[i] * 8, ((l2_at + i) * C) | kCopied);
  // Every file cluster is referenced once, but one that holds stored pieces: once per piece
  // that has a byte in it (as QEMU counts compressed clusters).
  std::vector<std::uint16_t> refcounts(total_clusters_, 1);
  for (std::uint64_t c = data_at; c < total_clusters_; ++c) refcounts[c] = 0;
  for (const auto& piece : pieces_) {
    const auto host = data_at * C + piece.at;
    std::uint64_t entry = host | kCopied;
    if (piece.sectors) {
      entry = host | kCompressed | (std::uint64_t{piece.sectors - 1} << kSectorsShift);
      for (auto c = host / C; c <= (host + piece.size() - 1) / C; ++c) ++refcounts[c];
    } else {
      ++refcounts[host / C];
    }
    const auto c = piece.cluster;
    const auto table =
        std::lower_bound(l2_tables_.begin(), l2_tables_.end(), c / kL2Entries) - l2_tables_.begin();
    put64(out, (l2_at + static_cast<std::uint64_t>(table)) * C + (c % kL2Entries) * 8, entry);
  }
  for (std::uint64_t b = 0; b < refcount_blocks_; ++b)
    put64(out, table_at * C + b * 8, (blocks_at + b) * C);
  for (std::uint64_t c = 0; c < total_clusters_; ++c) {
    const auto at = blocks_at * C + c * 2;
    out[at] = static_cast<char>(refcounts[c] >> 8);
    out[at + 1] = static_cast<char>(refcounts[c] & 0xff);
  }
  return out;
}

std::vector<Extent> data_extents_from_map(const std::string& map_json) {
  return data_extents(map_entries(map_json));
}

}  // namespace bowline::image
