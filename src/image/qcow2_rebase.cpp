// set_backing_file: a qcow2 image's backing file name rewritten in place. A space's disk that
// moves to another host keeps every cluster it holds; only the path of its base image, which
// differs from host to host, changes. QEMU and bowline's own overlay writer put the name after
// the header and its extensions in the first cluster, whose remainder is zeros: the new name
// takes the old one's place and as much of those zeros as it needs, and nothing else moves.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "image/errors.hpp"
#include "image/qcow2.hpp"

namespace bowline::image {

namespace {

std::uint64_t be(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

void set_backing_file(const std::filesystem::path& image, const std::string& backing) {
  const auto header = read_qcow2_header(image);
  if (!header) throw DiskError(image.string() + " is not a qcow2 image");
  if (!header->backing_file)
    throw DiskError(image.string() + " has no backing file to point elsewhere");
  const std::size_t cluster = std::size_t{1} << header->cluster_bits;
  Fd f{::open(image.c_str(), O_RDWR | O_CLOEXEC)};
  if (f.fd < 0) throw DiskError("cannot open " + image.string() + ": " + std::strerror(errno));
  std::vector<unsigned char> first(cluster);
  if (::pread(f.fd, first.data(), cluster, 0) != static_cast<ssize_t>(cluster))
    throw DiskError("cannot read the header cluster of " + image.string());
  const auto offset = be(first.data() + 8, 8);
  const auto old_size = be(first.data() + 16, 4);
  if (offset == 0 || offset + old_size > cluster)
    throw DiskError(image.string() + ": its backing file name is not in its header cluster");
  if (offset + backing.size() > cluster)
    throw DiskError(image.string() + ": the backing file name " + backing +
                    " does not fit in its header cluster");
  // Only zeros may follow the old name up to where the new one ends: the room is free.
  const auto end = std::max<std::uint64_t>(offset + old_size, offset + backing.size());
  if (!std::all_of(first.begin() + static_cast<long>(offset + old_size),
                   first.begin() + static_cast<long>(end), [](unsigned char c) { return c == 0; }))
    throw DiskError(image.string() +
                    ": something follows its backing file name in the header "
                    "cluster; rebase it with qemu-img rebase -u instead");
  std::fill(first.begin() + static_cast<long>(offset), first.begin() + static_cast<long>(end), 0);
  std::copy(backing.begin(), backing.end(), first.begin() + static_cast<long>(offset));
  for (int i = 0; i < 4; ++i)
    first[16 + i] = static_cast<unsigned char>(backing.size() >> (24 - 8 * i));
  if (::pwrite(f.fd, first.data(), end, 0) != static_cast<ssize_t>(end) || ::fsync(f.fd) != 0)
    throw DiskError("cannot write the header of " + image.string() + ": " + std::strerror(errno));
}

}  // namespace bowline::image
