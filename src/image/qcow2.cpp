#include "image/qcow2.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

#include "image/errors.hpp"

namespace bowline::image {
namespace fs = std::filesystem;

namespace {

constexpr std::uint32_t kMagic = 0x514649fb;  // "QFI\xfb"
constexpr std::uint32_t kExtEnd = 0;
constexpr std::uint32_t kExtBackingFormat = 0xe2792aca;
constexpr std::uint32_t kExtDataFile = 0x44415441;
constexpr std::uint64_t kIncompatibleDataFile = 1u << 2;
constexpr std::uint32_t kClusterBits = 16;  // 64 KiB, qemu-img's default
constexpr std::uint64_t kClusterSize = std::uint64_t{1} << kClusterBits;
constexpr std::uint32_t kHeaderLength = 112;      // v3 header with the compression type byte
constexpr std::uint32_t kRefcountOrder = 4;       // 16-bit refcounts
constexpr std::uint64_t kMaxL1Bytes = 32u << 20;  // QEMU's limit on the L1 table

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}
std::uint64_t be64(const unsigned char* p) {
  return (std::uint64_t{be32(p)} << 32) | be32(p + 4);
}
void put32(std::vector<unsigned char>& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<unsigned char>(v >> (24 - 8 * i));
}
void put64(std::vector<unsigned char>& b, std::size_t at, std::uint64_t v) {
  put32(b, at, static_cast<std::uint32_t>(v >> 32));
  put32(b, at + 4, static_cast<std::uint32_t>(v));
}

class File {
 public:
  File(const fs::path& path, int flags, mode_t mode = 0) : fd_(::open(path.c_str(), flags, mode)) {}
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  int get() const { return fd_; }
  // close(2) can report a failed write-back: it is checked, not only done.
  int close() {
    const int r = ::close(fd_);
    fd_ = -1;
    return r;
  }

 private:
  int fd_;
};

std::string errno_text(int err) {
  return std::generic_category().message(err);
}

bool pwrite_all(int fd, const unsigned char* data, std::size_t size, off_t at) {
  while (size > 0) {
    const auto n = ::pwrite(fd, data, size, at);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
    at += n;
  }
  return true;
}

}  // namespace

std::optional<Qcow2Header> read_qcow2_header(const fs::path& file) {
  File f(file, O_RDONLY | O_CLOEXEC);
  if (f.get() < 0) throw DiskError("cannot open " + file.string() + ": " + errno_text(errno));
  // The header, its extensions and the backing file name all live in the first cluster; 64 KiB
  // covers them for the cluster sizes anyone uses, and a longer name is cut off below.
  std::vector<unsigned char> b(kClusterSize);
  std::size_t got = 0;
  while (got < b.size()) {
    const auto n = ::pread(f.get(), b.data() + got, b.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw DiskError("cannot read " + file.string() + ": " + errno_text(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got < 4 || be32(b.data()) != kMagic) return std::nullopt;
  const auto damaged = [&](const std::string& why) {
    return DiskError(file.string() + " has a damaged qcow2 header: " + why);
  };
  if (got < 72) throw damaged("it is shorter than a qcow2 header");
  Qcow2Header h;
  h.version = be32(b.data() + 4);
  if (h.version != 2 && h.version != 3)
    throw damaged("version " + std::to_string(h.version) + " (bowline reads 2 and 3)");
  const auto backing_offset = be64(b.data() + 8);
  const auto backing_size = be32(b.data() + 16);
  h.cluster_bits = be32(b.data() + 20);
  h.virtual_size = be64(b.data() + 24);
  if (h.cluster_bits < 9 || h.cluster_bits > 21)
    throw damaged("cluster bits " + std::to_string(h.cluster_bits));
  h.crypt_method = be32(b.data() + 32);
  h.l1_size = be32(b.data() + 36);
  h.l1_table_offset = be64(b.data() + 40);

  std::size_t ext = 72;
  if (h.version == 3) {
    if (got < 104) throw damaged("it is shorter than a version 3 header");
    ext = be32(b.data() + 100);
    h.incompatible_features = be64(b.data() + 72);
    if (h.incompatible_features & kIncompatibleDataFile) h.external_data_file.emplace();
    if (ext > 104 && got > 104) h.compression_type = b[104];
  }
  // Header extensions, up to the end marker, the backing file name or the first cluster's end.
  const std::size_t ext_limit = std::min<std::size_t>(
      {got, std::size_t{1} << h.cluster_bits,
       backing_offset ? static_cast<std::size_t>(std::min<std::uint64_t>(backing_offset, got))
                      : got});
  while (ext + 8 <= ext_limit) {
    const auto type = be32(b.data() + ext);
    const auto length = be32(b.data() + ext + 4);
    if (type == kExtEnd) break;
    if (ext + 8 + length > ext_limit) throw damaged("a header extension runs past its end");
    if (type == kExtBackingFormat)
      h.backing_format.emplace(reinterpret_cast<const char*>(b.data() + ext + 8), length);
    if (type == kExtDataFile)
      h.external_data_file.emplace(reinterpret_cast<const char*>(b.data() + ext + 8), length);
    ext += 8 + (length + 7) / 8 * 8;
  }
  if (backing_offset != 0) {
    // Not offset + size > got: an offset near 2^64 wraps that sum, and the name was then
    // read from outside the buffer (undefined behaviour on a hostile image).
    if (backing_size == 0 || backing_size > 1023 || backing_offset > got ||
        backing_size > got - backing_offset)
      throw damaged("the backing file name is out of place");
    h.backing_file.emplace(reinterpret_cast<const char*>(b.data() + backing_offset), backing_size);
  }
  return h;
}

void write_qcow2_overlay(const fs::path& overlay, const fs::path& backing,
                         const std::string& backing_format, std::uint64_t virtual_size) {
  const std::string name = backing.string();
  if (virtual_size == 0 || virtual_size % 512 != 0)
    throw DiskError("a disk size must be a whole number of 512-byte sectors, not " +
                    std::to_string(virtual_size) + " bytes");
  // One L2 table maps cluster_size / 8 clusters; the L1 table points at the L2 tables.
  constexpr std::uint64_t kBytesPerL2 = kClusterSize * (kClusterSize / 8);
  const std::uint64_t l1_entries = (virtual_size + kBytesPerL2 - 1) / kBytesPerL2;
  const std::uint64_t l1_bytes = l1_entries * 8;
  if (l1_bytes > kMaxL1Bytes)
    throw DiskError("a disk of " + std::to_string(virtual_size) +
                    " bytes is larger than a qcow2 image with 64 KiB clusters can be");
  if (name.empty() || name.size() > 1023)
    throw DiskError("the backing file name must be 1 to 1023 bytes long: " + name);

  // Cluster 0: header, extensions, backing name. 1: refcount table. 2: refcount block.
  // 3 onwards: the L1 table, all zeros (nothing allocated: every read falls through to the
  // backing file). The file ends where the L1 table ends, as qemu-img's own overlays do.
  const std::uint64_t refcount_table = kClusterSize, refcount_block = 2 * kClusterSize,
                      l1_table = 3 * kClusterSize;
  const std::uint64_t l1_clusters = (l1_bytes + kClusterSize - 1) / kClusterSize;
  const std::uint64_t used_clusters = 3 + l1_clusters;

  const std::size_t format_ext = kHeaderLength;
  const std::size_t format_len = backing_format.size();
  const std::size_t end_ext = format_ext + 8 + (format_len + 7) / 8 * 8;
  const std::size_t backing_at = end_ext + 8;
  std::vector<unsigned char> header(backing_at + name.size(), 0);
  put32(header, 0, kMagic);
  put32(header, 4, 3);
  put64(header, 8, backing_at);
  put32(header, 16, static_cast<std::uint32_t>(name.size()));
  put32(header, 20, kClusterBits);
  put64(header, 24, virtual_size);
  put32(header, 32, 0);  // no encryption
  put32(header, 36, static_cast<std::uint32_t>(l1_entries));
  put64(header, 40, l1_table);
  put64(header, 48, refcount_table);
  put32(header, 56, 1);  // refcount table clusters
  put32(header, 60, 0);  // snapshots
  put64(header, 64, 0);
  // 72..95: incompatible, compatible and autoclear features, all clear.
  put32(header, 96, kRefcountOrder);
  put32(header, 100, kHeaderLength);
  // 104: compression type zlib (0), then padding to 112.
  put32(header, format_ext, kExtBackingFormat);
  put32(header, format_ext + 4, static_cast<std::uint32_t>(format_len));
  std::memcpy(header.data() + format_ext + 8, backing_format.data(), format_len);
  put32(header, end_ext, kExtEnd);
  std::memcpy(header.data() + backing_at, name.data(), name.size());
  if (header.size() > kClusterSize) throw DiskError("the qcow2 header does not fit its cluster");

  std::vector<unsigned char> table(8, 0);
  put64(table, 0, refcount_block);
  std::vector<unsigned char> block(used_clusters * 2, 0);
  for (std::uint64_t c = 0; c < used_clusters; ++c) block[2 * c + 1] = 1;  // big-endian 1

  File f(overlay, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (f.get() < 0) {
    if (errno == EEXIST)
      throw DiskError("the disk " + overlay.string() + " already exists; it is not overwritten");
    throw DiskError("cannot create " + overlay.string() + ": " + errno_text(errno));
  }
  const auto fail = [&](const std::string& what) {
    const int err = errno;
    std::error_code ec;
    fs::remove(overlay, ec);
    return DiskError("cannot " + what + " " + overlay.string() + ": " + errno_text(err));
  };
  // Zeros are holes: only the header, the table entry and the refcounts are written.
  if (!pwrite_all(f.get(), header.data(), header.size(), 0) ||
      !pwrite_all(f.get(), table.data(), table.size(), static_cast<off_t>(refcount_table)) ||
      !pwrite_all(f.get(), block.data(), block.size(), static_cast<off_t>(refcount_block)))
    throw fail("write");
  if (::ftruncate(f.get(), static_cast<off_t>(l1_table + l1_bytes)) != 0) throw fail("size");
  if (::fdatasync(f.get()) != 0) throw fail("sync");
  if (f.close() != 0) throw fail("close");
}

}  // namespace bowline::image
