// The files of disk objects on this host: `<images>/volumes/<owner id>/<name>.qcow2`.
// They sit under the images path, not the data directory, because QEMU's user must reach them
// (the data directory is 0700, docs/security.md): the owner's directory is 0711 (no listing)
// and each file 0600 (libvirt's dynamic ownership hands it to QEMU while a domain runs). Each
// is made as `<name>.qcow2.part` and renamed once complete, so a failed create leaves nothing
// and a half-made file is never attached.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "image/cache.hpp"
#include "image/overlay.hpp"
#include "spec/spec.hpp"

namespace bowline::engine {

class DiskFiles {
 public:
  DiskFiles(std::filesystem::path images_path, image::ImageCache& images, image::Disks& disks,
            std::chrono::milliseconds copy_timeout = std::chrono::hours(2));

  std::filesystem::path path_of(std::int64_t owner_id, const std::string& name) const;
  // A libvirt space's own disk (the overlay in its directory).
  std::filesystem::path space_disk(const std::string& domain) const;

  // Each makes `file` (never overwriting one) and returns its virtual size.
  std::uint64_t make_blank(const std::filesystem::path& file, std::uint64_t bytes);
  // An overlay on the cached image (cache entries are never removed), grown to `bytes`.
  std::uint64_t make_from_image(const std::filesystem::path& file, const spec::Image& image,
                                std::optional<std::uint64_t> bytes);
  // A standalone copy of another disk, its backing chain folded in.
  std::uint64_t make_copy(const std::filesystem::path& file, const std::filesystem::path& source);
  // A standalone copy of a disk as its internal snapshot `snapshot` has it.
  std::uint64_t make_at_snapshot(const std::filesystem::path& file,
                                 const std::filesystem::path& source, const std::string& snapshot);
  // A file staged elsewhere on this filesystem (an import), moved in.
  std::uint64_t adopt(const std::filesystem::path& file, const std::filesystem::path& staged);

  // What a server that stopped mid-way left (a crash, a kill): staged imports and half-made
  // disk files (`*.qcow2.part`). Run at start, before any import or create; returns how many
  // files went.
  std::size_t sweep_leftovers();

  // Where an import stages a disk before it is checked: beside the disk objects, so that the
  // adopt is a rename.
  std::filesystem::path staging_file(const std::string& tag) const;

  // Why a file that came from outside (an import) cannot be a disk of its own, or empty
  // (image/standalone_qcow2.hpp): a standalone qcow2 of at most `max_virtual_size` bytes.
  std::string standalone_problem(const std::filesystem::path& file,
                                 std::uint64_t max_virtual_size) const;

  void remove(const std::filesystem::path& file);
  std::uint64_t virtual_size(const std::filesystem::path& file);
  // From the qcow2 header, in-process: nullopt when the file is not qcow2 or not there.
  std::optional<std::uint64_t> header_virtual_size(const std::filesystem::path& file) const;
  // The virtual size of `image` when it is here already (the library, a finished download),
  // without fetching anything; 0 when it is not known yet.
  std::uint64_t image_size_hint(const spec::Image& image) const;
  image::Disks& disks() { return disks_; }
  image::ImageCache& images() { return images_; }

 private:
  template <class Make>
  std::uint64_t make(const std::filesystem::path& file, Make&& make_part);

  std::filesystem::path images_path_;
  std::filesystem::path volumes_;
  image::ImageCache& images_;
  image::Disks& disks_;
  std::chrono::milliseconds copy_timeout_;
};

}  // namespace bowline::engine
