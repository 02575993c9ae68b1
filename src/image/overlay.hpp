// A space's disk: a qcow2 overlay on a shared base image, written in-process and grown with
// qemu-img through the ProcessRunner seam (so tests can assert the exact commands).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "image/errors.hpp"
#include "util/process.hpp"

namespace bowline::image {

// What `qemu-img info` says about an image.
struct DiskInfo {
  std::uint64_t virtual_size = 0;
  std::string format;                         // "qcow2", "raw", ...
  std::optional<std::string> backing_file;    // as recorded in the image
  std::optional<std::string> backing_format;  // as recorded; empty when the image has none
};

struct DiskOptions {
  std::string qemu_img = "qemu-img";
  std::chrono::milliseconds timeout{std::chrono::minutes(2)};
};

// The size qemu-img will accept for `bytes`: rounded up to a whole 512-byte sector.
std::uint64_t sector_aligned(std::uint64_t bytes);

class Disks {
 public:
  explicit Disks(util::ProcessRunner& runner, DiskOptions options = {});

  // Makes `overlay` on top of `base` (made absolute: a relative backing file would be
  // resolved against the overlay's directory), recording the backing format, with the base's
  // virtual size or `size_bytes` when that is more. The base must be qcow2; a size below its
  // virtual size is refused before anything is made; an existing overlay is never
  // overwritten; a failure removes what was made. Done in-process (image/qcow2.hpp says why):
  // no command runs unless the base is not qcow2, when `qemu-img info` names its format.
  void create_overlay(const std::filesystem::path& base, const std::filesystem::path& overlay,
                      std::optional<std::uint64_t> size_bytes = std::nullopt);

  // Grows an existing disk to `size_bytes` with `qemu-img resize`. Never shrinks: a size at
  // or below the current virtual size (read from the qcow2 header) changes nothing and
  // returns false.
  bool grow(const std::filesystem::path& disk, std::uint64_t size_bytes);

  // An empty standalone qcow2 of `size_bytes` (`qemu-img create`); an existing file is never
  // overwritten.
  void create_blank(const std::filesystem::path& disk, std::uint64_t size_bytes);
  // A standalone qcow2 copy of `source` with its backing chain folded in (`qemu-img convert`),
  // within `timeout` (a copy takes as long as the disk is big); an existing file is never
  // overwritten.
  void flatten(const std::filesystem::path& source, const std::filesystem::path& copy,
               std::chrono::milliseconds timeout);

  // A qcow2 copy of `source` as its internal snapshot `snapshot` has it (`qemu-img convert -l`):
  // with `base`, an overlay on it holding only what differs (the base must be what `source`
  // is an overlay on), else standalone. An existing file is never overwritten; a failure
  // removes what was made.
  void copy_at_snapshot(const std::filesystem::path& source, const std::string& snapshot,
                        const std::filesystem::path& copy,
                        const std::optional<std::filesystem::path>& base,
                        std::chrono::milliseconds timeout);

  // `qemu-img map --output=json` of the whole backing chain: which guest ranges hold data.
  std::string map_json(const std::filesystem::path& image);

  // `qemu-img info --backing-chain --output=json`: each image of the chain, top first.
  std::string chain_json(const std::filesystem::path& image);

  // `qemu-img info -U --output=json` (-U: also for a disk a running domain holds).
  DiskInfo info(const std::filesystem::path& image);

 private:
  util::ProcessResult run(const std::vector<std::string>& argv);
  void resize(const std::filesystem::path& disk, std::uint64_t bytes);

  util::ProcessRunner& runner_;
  DiskOptions options_;
};

}  // namespace bowline::image
