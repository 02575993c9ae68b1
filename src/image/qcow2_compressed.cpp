#include "image/qcow2_compressed.hpp"

#include <libdeflate.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "image/errors.hpp"

namespace bowline::image {

namespace {

// From QEMU's docs/interop/qcow2.txt.
constexpr std::uint64_t kIncompatCorrupt = 1u << 1, kIncompatDataFile = 1u << 2,
                        kIncompatExtendedL2 = 1u << 4;
constexpr std::uint64_t kKnownIncompat = 0x1f;
constexpr std::uint64_t kL1OffsetMask = 0x00fffffffffffe00ULL;
constexpr std::uint64_t kCompressedBit = 1ULL << 62;
constexpr std::uint64_t kMaxL1Entries = 32u << 20 >> 3;  // QEMU's own limit (32 MiB of L1)

std::uint64_t be64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

// Reads what is there; zeroes past the file's end (as QEMU reads a compressed cluster whose
// last sector the file does not hold in full).
void pread_at(int fd, void* into, std::size_t size, std::uint64_t at) {
  auto* p = static_cast<char*>(into);
  std::size_t done = 0;
  while (done < size) {
    const auto n = ::pread(fd, p + done, size - done, static_cast<off_t>(at + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw DiskError(std::string("cannot read a qcow2 file: ") + std::strerror(errno));
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  std::memset(p + done, 0, size - done);
}

}  // namespace

Qcow2Compressed::Qcow2Compressed(int fd, const Qcow2Header& header)
    : fd_(fd), cluster_bits_(header.cluster_bits) {
  const auto incompat = header.incompatible_features;
  // zstd (compression type 1) is QEMU's to read; so is anything encrypted, damaged, kept in
  // another file, or made with a feature newer than this reader.
  if (header.crypt_method != 0 || header.compression_type != 0 || header.l1_size > kMaxL1Entries ||
      (incompat & ~kKnownIncompat) || (incompat & (kIncompatCorrupt | kIncompatDataFile)))
    return;
  if (incompat & kIncompatExtendedL2) entry_bytes_ = 16;
  const auto l1_size = header.l1_size;
  const auto l1_offset = header.l1_table_offset;
  cluster_size_ = 1ULL << cluster_bits_;
  std::vector<unsigned char> l1(l1_size * 8);
  pread_at(fd_, l1.data(), l1.size(), l1_offset);
  l1_.resize(l1_size);
  for (std::uint64_t i = 0; i < l1_size; ++i) l1_[i] = be64(l1.data() + 8 * i) & kL1OffsetMask;
  inflater_ = libdeflate_alloc_decompressor();
  if (inflater_ == nullptr) throw DiskError("out of memory for a decompressor");
  supported_ = true;
}

Qcow2Compressed::~Qcow2Compressed() {
  if (inflater_ != nullptr) libdeflate_free_decompressor(inflater_);
}

bool Qcow2Compressed::l2_entry(std::uint64_t index, std::uint64_t& entry) {
  const std::uint64_t per_table = cluster_size_ / entry_bytes_;
  const auto l1_index = index / per_table;
  if (l1_index >= l1_.size() || l1_[l1_index] == 0) return false;
  // Reads go forward, so the one table last used is all the cache there is to keep.
  if (l2_offset_ != l1_[l1_index]) {
    l2_.resize(cluster_size_);
    pread_at(fd_, l2_.data(), l2_.size(), l1_[l1_index]);
    l2_offset_ = l1_[l1_index];
  }
  entry = be64(l2_.data() + (index % per_table) * entry_bytes_);
  return true;
}

std::optional<Qcow2Compressed::Stored> Qcow2Compressed::stored(std::uint64_t index) {
  std::uint64_t entry = 0;
  if (!supported_ || !l2_entry(index, entry) || !(entry & kCompressedBit)) return std::nullopt;
  // The compressed descriptor: the host byte offset in the low bits, and above it the count
  // of further 512-byte sectors the compressed stream runs into.
  const unsigned shift = 62 - (cluster_bits_ - 8);
  Stored out;
  out.host = entry & ((1ULL << shift) - 1);
  out.sectors =
      static_cast<std::uint32_t>(((entry >> shift) & ((1ULL << (cluster_bits_ - 8)) - 1)) + 1);
  out.bytes = std::uint64_t{out.sectors} * 512 - (out.host & 511);
  return out;
}

void Qcow2Compressed::read_stored(const Stored& where, char* out) {
  pread_at(fd_, out, where.bytes, where.host);
}

bool Qcow2Compressed::cluster(std::uint64_t index, std::vector<char>& into) {
  const auto where = stored(index);
  if (!where) return false;
  const auto size = where->bytes;
  compressed_.resize(size);
  read_stored(*where, compressed_.data());
  into.resize(cluster_size_);
  std::size_t used = 0, made = 0;
  // QEMU takes a stream that fills the cluster exactly (what follows it is padding).
  const auto result = libdeflate_deflate_decompress_ex(inflater_, compressed_.data(), size,
                                                       into.data(), into.size(), &used, &made);
  return result == LIBDEFLATE_SUCCESS && made == cluster_size_;
}

bool Qcow2Compressed::read(std::uint64_t offset, char* out, std::uint32_t length) {
  if (!supported_) return false;
  for (std::uint64_t at = offset, end = offset + length; at < end;) {
    const auto index = at >> cluster_bits_;
    if (index != last_cluster_) {
      last_cluster_ = UINT64_MAX;
      if (!cluster(index, last_)) return false;
      last_cluster_ = index;
    }
    const auto within = at - (index << cluster_bits_);
    const auto piece = std::min<std::uint64_t>(end - at, cluster_size_ - within);
    std::memcpy(out + (at - offset), last_.data() + within, piece);
    at += piece;
  }
  return true;
}

}  // namespace bowline::image
