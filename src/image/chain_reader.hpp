// Reads a stopped disk as its guest sees it straight from the files of its backing chain, at
// the host offsets `qemu-img map` reports; inflates the zlib-compressed clusters of a qcow2
// (cloud images ship them) itself (qcow2_compressed.hpp); and asks `fallback` (qemu-nbd,
// QEMU's own block layer) only for the rest: zstd, encrypted images, external data files. Why: an
// export moved every byte through qemu-nbd's socket, two more copies and a third of the export's
// CPU; a pread from the page cache is one. The caller keeps qemu-nbd running on the image
// meanwhile, and with it QEMU's own image lock: a domain started meanwhile is refused by QEMU, so
// the offsets stay true.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "image/guest_reader.hpp"
#include "image/qcow2_compressed.hpp"
#include "image/qcow2_stream.hpp"

namespace bowline::image {

// One entry of `qemu-img map --output=json`: guest range [start, start + length) lives in the
// chain's image at `depth` (0: the top), at `offset` in that image's file when it has one.
struct MapEntry {
  std::uint64_t start = 0, length = 0;
  int depth = 0;
  bool data = false, zero = false;
  std::optional<std::uint64_t> offset;
  bool operator==(const MapEntry&) const = default;
};
std::vector<MapEntry> map_entries(const std::string& map_json);  // throws DiskError
// The guest ranges that hold data (what a streamed qcow2 is laid out from).
std::vector<Extent> data_extents(const std::vector<MapEntry>& map);

// One image of a backing chain, top first (`qemu-img info --backing-chain`).
struct ChainImage {
  std::filesystem::path file;
  std::string format;
  bool encrypted = false;
  bool external_data = false;  // a qcow2 data-file: map offsets are into that file instead
  // Whether map offsets into `file` are the guest's bytes as they are stored.
  bool readable_in_place() const {
    return !encrypted && !external_data && (format == "qcow2" || format == "raw");
  }
};
std::vector<ChainImage> chain_images(const std::string& info_json);  // throws DiskError

class ChainReader : public GuestReader {
 public:
  // Opens every readable-in-place image of `chain` (DiskError when one cannot be opened).
  ChainReader(std::vector<MapEntry> map, const std::vector<ChainImage>& chain,
              GuestReader& fallback);
  // Without a fallback: what only QEMU could read is a DiskError (enough for
  // stored_clusters()).
  ChainReader(std::vector<MapEntry> map, const std::vector<ChainImage>& chain);
  ~ChainReader() override;
  ChainReader(const ChainReader&) = delete;
  ChainReader& operator=(const ChainReader&) = delete;

  std::uint64_t size() const override;
  void read(std::uint64_t offset, char* out, std::uint32_t length) override;

  // The guest clusters of `cluster_size` bytes that one image of the chain holds compressed
  // in a form this reader supports and that nothing above it covers, ascending: an export
  // copies them as they are (qcow2_stream.hpp).
  std::vector<StoredCluster> stored_clusters(std::uint64_t cluster_size);
  // Guest cluster `cluster`'s stored bytes, then zeros to the end of its `sectors` sectors
  // (`out` holds sectors * 512 bytes). DiskError when the chain does not hold it so (any
  // more).
  void read_stored(std::uint64_t cluster, std::uint64_t cluster_size, std::uint32_t sectors,
                   char* out);

  // How many bytes were read from the files, inflated here, and read by the fallback (for
  // tests and logs).
  std::uint64_t bytes_in_place() const { return in_place_; }
  std::uint64_t bytes_inflated() const { return inflated_; }
  std::uint64_t bytes_from_fallback() const { return from_fallback_; }
  std::uint64_t bytes_stored() const { return stored_; }  // copied compressed

 private:
  std::vector<MapEntry> map_;  // ascending by start, as qemu-img gives it
  std::vector<int> fds_;       // by depth; -1 where the fallback reads
  std::vector<std::unique_ptr<Qcow2Compressed>> compressed_;  // by depth; null: not a qcow2
  // The entry holding guest byte `offset`, or map_.end().
  std::vector<MapEntry>::const_iterator entry_at(std::uint64_t offset) const;

  GuestReader* fallback_;  // null: none
  std::uint64_t in_place_ = 0, inflated_ = 0, from_fallback_ = 0, stored_ = 0;
};

}  // namespace bowline::image
