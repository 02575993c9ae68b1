// Streams a stopped space's archive (space_archive.hpp) as it is produced: the boot disk is
// read as its guest sees it (image/chain_reader.hpp: from the chain's files where qemu-img map
// gives offsets, through qemu-nbd elsewhere) and written as a standalone qcow2 whose
// tables are computed up front from `qemu-img map` (image/qcow2_stream.hpp), so the archive's
// size is known before its first byte and nothing is ever copied to a temporary file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "engine/engine.hpp"
#include "image/overlay.hpp"
#include "image/qcow2_stream.hpp"

namespace bowline::engine {

class SpaceArchiveStream {
 public:
  // Maps the disk (qemu-img map); throws image::DiskError when it cannot be read.
  SpaceArchiveStream(ExportSource source, image::Disks& disks, std::int64_t mtime);
  std::uint64_t size() const { return size_; }  // of the whole archive, in bytes
  // Writes the archive to `sink`, which returns false when the reader went away (then this
  // stops early). `work_dir`: a private directory for qemu-nbd's socket.
  void run(const std::filesystem::path& work_dir,
           const std::function<bool(std::string_view)>& sink);

 private:
  ExportSource source_;
  image::Disks& disks_;
  std::vector<image::Extent> extents_;  // what the layout was made from
  std::unique_ptr<image::Qcow2StreamLayout> layout_;
  std::int64_t mtime_;
  std::uint64_t size_ = 0;
};

}  // namespace bowline::engine
