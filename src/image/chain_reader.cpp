#include "image/chain_reader.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "image/errors.hpp"
#include "image/qcow2.hpp"

namespace bowline::image {

std::vector<MapEntry> map_entries(const std::string& map_json) {
  const auto parsed = nlohmann::json::parse(map_json, nullptr, false);
  if (!parsed.is_array()) throw DiskError("qemu-img map did not answer a JSON list");
  std::vector<MapEntry> out;
  try {
    for (const auto& e : parsed) {
      MapEntry entry;
      entry.start = e.at("start").get<std::uint64_t>();
      entry.length = e.at("length").get<std::uint64_t>();
      entry.depth = e.value("depth", 0);
      entry.data = e.value("data", false);
      entry.zero = e.value("zero", false);
      if (e.contains("offset")) entry.offset = e["offset"].get<std::uint64_t>();
      if (!out.empty() && entry.start < out.back().start + out.back().length)
        throw DiskError("qemu-img map gave overlapping or unordered ranges");
      out.push_back(entry);
    }
  } catch (const nlohmann::json::exception& e) {
    throw DiskError(std::string("qemu-img map gave output bowline cannot read: ") + e.what());
  }
  return out;
}

std::vector<Extent> data_extents(const std::vector<MapEntry>& map) {
  std::vector<Extent> out;
  for (const auto& e : map)
    if (e.data) out.push_back({e.start, e.length});
  return out;
}

std::vector<ChainImage> chain_images(const std::string& info_json) {
  const auto parsed = nlohmann::json::parse(info_json, nullptr, false);
  if (!parsed.is_array() || parsed.empty())
    throw DiskError("qemu-img info --backing-chain did not answer a JSON list");
  std::vector<ChainImage> out;
  try {
    for (const auto& e : parsed) {
      ChainImage image;
      image.file = e.at("filename").get<std::string>();
      image.format = e.at("format").get<std::string>();
      image.encrypted = e.value("encrypted", false);
      if (const auto specific = e.find("format-specific");
          specific != e.end() && specific->is_object()) {
        const auto data = specific->value("data", nlohmann::json::object());
        image.external_data = data.is_object() && data.contains("data-file");
        image.encrypted = image.encrypted || (data.is_object() && data.contains("encrypt"));
      }
      out.push_back(std::move(image));
    }
  } catch (const nlohmann::json::exception& e) {
    throw DiskError(std::string("qemu-img info gave output bowline cannot read: ") + e.what());
  }
  return out;
}

ChainReader::ChainReader(std::vector<MapEntry> map, const std::vector<ChainImage>& chain,
                         GuestReader& fallback)
    : ChainReader(std::move(map), chain) {
  fallback_ = &fallback;
}

ChainReader::ChainReader(std::vector<MapEntry> map, const std::vector<ChainImage>& chain)
    : map_(std::move(map)), fallback_(nullptr) {
  for (const auto& image : chain) {
    int fd = -1;
    if (image.readable_in_place()) {
      fd = ::open(image.file.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        const int error = errno;
        for (int open_fd : fds_)
          if (open_fd >= 0) ::close(open_fd);
        throw DiskError("cannot read " + image.file.string() + ": " + std::strerror(error));
      }
    }
    fds_.push_back(fd);
  }
  try {
    for (std::size_t depth = 0; depth < chain.size(); ++depth) {
      std::optional<Qcow2Header> header;
      if (fds_[depth] >= 0 && chain[depth].format == "qcow2")
        header = read_qcow2_header(chain[depth].file);
      compressed_.push_back(header ? std::make_unique<Qcow2Compressed>(fds_[depth], *header)
                                   : nullptr);
    }
  } catch (...) {
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
    throw;
  }
}

ChainReader::~ChainReader() {
  for (int fd : fds_)
    if (fd >= 0) ::close(fd);
}

void ChainReader::read(std::uint64_t offset, char* out, std::uint32_t length) {
  if (offset + length > size()) throw DiskError("a read past the end of the disk");
  const auto end = offset + length;
  // The entry holding `offset`: the last one that starts at or before it.
  auto it = std::upper_bound(map_.begin(), map_.end(), offset,
                             [](std::uint64_t at, const MapEntry& e) { return at < e.start; });
  if (it != map_.begin()) --it;
  for (auto at = offset; at < end;) {
    while (it != map_.end() && it->start + it->length <= at) ++it;
    char* into = out + (at - offset);
    if (it == map_.end() || it->start > at) {  // not in the map: nothing there
      const auto next = it == map_.end() ? end : std::min(end, it->start);
      std::memset(into, 0, next - at);
      at = next;
      continue;
    }
    const auto piece = std::min(end, it->start + it->length) - at;
    const auto depth = static_cast<std::size_t>(it->depth);
    if (it->zero || !it->data) {
      std::memset(into, 0, piece);
    } else if (it->offset && it->depth >= 0 && depth < fds_.size() && fds_[depth] >= 0) {
      const int fd = fds_[depth];
      auto from = *it->offset + (at - it->start);
      for (std::uint64_t done = 0; done < piece;) {
        const auto n = ::pread(fd, into + done, piece - done, static_cast<off_t>(from + done));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0)
          throw DiskError("cannot read the disk at " + std::to_string(at + done) + ": " +
                          std::strerror(errno));
        if (n == 0) throw DiskError("the disk's file ends before what qemu-img map reports");
        done += static_cast<std::uint64_t>(n);
      }
      in_place_ += piece;
    } else if (depth < compressed_.size() && compressed_[depth] &&
               compressed_[depth]->read(at, into, static_cast<std::uint32_t>(piece))) {
      inflated_ += piece;
    } else {
      if (!fallback_) throw DiskError("a part of the disk only QEMU can read, and no QEMU here");
      fallback_->read(at, into, static_cast<std::uint32_t>(piece));
      from_fallback_ += piece;
    }
    at += piece;
  }
}

std::uint64_t ChainReader::size() const {
  if (fallback_) return fallback_->size();
  return map_.empty() ? 0 : map_.back().start + map_.back().length;
}

std::vector<MapEntry>::const_iterator ChainReader::entry_at(std::uint64_t offset) const {
  auto it = std::upper_bound(map_.begin(), map_.end(), offset,
                             [](std::uint64_t at, const MapEntry& e) { return at < e.start; });
  if (it == map_.begin()) return map_.end();
  --it;
  return offset < it->start + it->length ? it : map_.end();
}

std::vector<StoredCluster> ChainReader::stored_clusters(std::uint64_t cluster_size) {
  std::vector<StoredCluster> out;
  for (const auto& e : map_) {
    // qemu-img map gives no host offset for compressed data.
    if (!e.data || e.zero || e.offset || e.depth < 0) continue;
    const auto depth = static_cast<std::size_t>(e.depth);
    if (depth >= compressed_.size() || !compressed_[depth] || !compressed_[depth]->supported() ||
        compressed_[depth]->cluster_size() != cluster_size)
      continue;
    // Whole clusters of this entry only: a cluster the image above covers in part (subclusters)
    // is read and written plain.
    for (auto c = (e.start + cluster_size - 1) / cluster_size;
         (c + 1) * cluster_size <= e.start + e.length; ++c)
      if (const auto where = compressed_[depth]->stored(c)) out.push_back({c, where->sectors});
  }
  return out;
}

void ChainReader::read_stored(std::uint64_t cluster, std::uint64_t cluster_size,
                              std::uint32_t sectors, char* out) {
  const auto it = entry_at(cluster * cluster_size);
  std::optional<Qcow2Compressed::Stored> where;
  if (it != map_.end() && it->data && !it->offset && it->depth >= 0 &&
      static_cast<std::size_t>(it->depth) < compressed_.size() && compressed_[it->depth] &&
      compressed_[it->depth]->cluster_size() == cluster_size)
    where = compressed_[it->depth]->stored(cluster);
  if (!where || where->sectors != sectors)
    throw DiskError("the disk changed after the export began (cluster " + std::to_string(cluster) +
                    " is no longer stored compressed as it was)");
  compressed_[it->depth]->read_stored(*where, out);
  std::memset(out + where->bytes, 0, sectors * 512ULL - where->bytes);
  stored_ += where->bytes;
}

}  // namespace bowline::image
