// Reads the compressed clusters of one qcow2 file (as cloud images ship them) by itself:
// the cluster's descriptor from the L1 and L2 tables, then raw deflate inflated with
// libdeflate. Why bowline owns this small piece of qcow2: an export of a cloud-image space
// spent most of its time in qemu-nbd inflating with zlib one request at a time and copying
// every byte through a socket; here each reader thread inflates its own runs, about twice as
// fast per byte. Anything this does not read (zstd, encryption, an external data file, a
// cluster that is not a compressed one, a stream that does not inflate to exactly one
// cluster) is left to QEMU: `read` answers false and the caller asks qemu-nbd.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "image/qcow2.hpp"

struct libdeflate_decompressor;

namespace bowline::image {

class Qcow2Compressed {
 public:
  // `fd`: the qcow2 file whose header is `header`, open for reading, kept open by the caller.
  // Throws DiskError when its L1 table cannot be read.
  Qcow2Compressed(int fd, const Qcow2Header& header);
  ~Qcow2Compressed();
  Qcow2Compressed(const Qcow2Compressed&) = delete;
  Qcow2Compressed& operator=(const Qcow2Compressed&) = delete;

  // Whether this file's compressed clusters can be read here at all.
  bool supported() const { return supported_; }
  // The guest bytes [offset, offset + length) of this file's own clusters, each of which must
  // be compressed; false (and `out` undefined) when one is not, or does not inflate as QEMU
  // requires. Throws DiskError when the file cannot be read.
  bool read(std::uint64_t offset, char* out, std::uint32_t length);

  // Where guest cluster `index`'s compressed stream lies in the file, as QEMU reads it:
  // `bytes` from `host` (the stream, then whatever shares its last sector), which is `sectors`
  // 512-byte sectors counted from the one `host` is in. nullopt when that cluster is not a
  // compressed one this reader supports. An export copies these bytes as they are into its
  // own qcow2 instead of inflating them (qcow2_stream.hpp).
  struct Stored {
    std::uint64_t host = 0, bytes = 0;
    std::uint32_t sectors = 0;
    bool operator==(const Stored&) const = default;
  };
  std::optional<Stored> stored(std::uint64_t index);
  // Its `bytes` as they are in the file (zeros past the file's end, as QEMU reads them).
  void read_stored(const Stored& where, char* out);
  std::uint64_t cluster_size() const { return cluster_size_; }

 private:
  bool cluster(std::uint64_t index, std::vector<char>& into);  // one guest cluster, inflated
  bool l2_entry(std::uint64_t index, std::uint64_t& entry);

  int fd_;
  bool supported_ = false;
  unsigned cluster_bits_ = 16;
  std::uint64_t cluster_size_ = 0;
  unsigned entry_bytes_ = 8;  // 16 with extended L2 entries
  std::vector<std::uint64_t> l1_;
  std::uint64_t l2_offset_ = 0;  // of the table in l2_ (0: none yet)
  std::vector<unsigned char> l2_;
  std::uint64_t last_cluster_ = UINT64_MAX;  // what last_ holds
  std::vector<char> last_, compressed_;
  libdeflate_decompressor* inflater_ = nullptr;
};

}  // namespace bowline::image
