#include "engine/disk_files.hpp"

#include "engine/engine_error.hpp"
#include "image/qcow2.hpp"
#include "image/standalone_qcow2.hpp"
#include "plan/plan.hpp"

namespace bowline::engine {

namespace fs = std::filesystem;

namespace {

constexpr auto kDirectory = fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec;
constexpr auto kFile = fs::perms::owner_read | fs::perms::owner_write;

void make_directory(const fs::path& dir) {
  fs::create_directories(dir);
  fs::permissions(dir, kDirectory, fs::perm_options::replace);
}

}  // namespace

DiskFiles::DiskFiles(fs::path images_path, image::ImageCache& images, image::Disks& disks,
                     std::chrono::milliseconds copy_timeout)
    : images_path_(std::move(images_path)),
      volumes_(images_path_ / "volumes"),
      images_(images),
      disks_(disks),
      copy_timeout_(copy_timeout) {}

fs::path DiskFiles::path_of(std::int64_t owner_id, const std::string& name) const {
  // The name is a DNS-1123 label (checked by the engine): no '/', no "..".
  return volumes_ / std::to_string(owner_id) / (name + ".qcow2");
}

fs::path DiskFiles::space_disk(const std::string& domain) const {
  return fs::path(plan::space_dir(images_path_.string(), domain)) / "disk.qcow2";
}

fs::path DiskFiles::staging_file(const std::string& tag) const {
  make_directory(volumes_);
  make_directory(volumes_ / "staging");
  return volumes_ / "staging" / (tag + ".qcow2.part");
}

template <class Make>
std::uint64_t DiskFiles::make(const fs::path& file, Make&& make_part) {
  make_directory(volumes_);
  make_directory(file.parent_path());
  std::error_code ec;
  if (fs::exists(fs::symlink_status(file, ec)))
    throw EngineError(EngineError::Kind::Conflict,
                      "the disk's file exists already (a leftover of an earlier server?): it is "
                      "not replaced; an admin finds it under the images path, volumes/");
  const auto part = fs::path(file.string() + ".part");
  fs::remove(part, ec);  // an earlier attempt's, interrupted
  try {
    make_part(part);
    fs::permissions(part, kFile, fs::perm_options::replace);
    const auto size = disks_.info(part).virtual_size;
    fs::rename(part, file);
    return size;
  } catch (...) {
    fs::remove(part, ec);
    throw;
  }
}

std::uint64_t DiskFiles::make_blank(const fs::path& file, std::uint64_t bytes) {
  return make(file, [&](const fs::path& part) { disks_.create_blank(part, bytes); });
}

std::uint64_t DiskFiles::make_from_image(const fs::path& file, const spec::Image& image,
                                         std::optional<std::uint64_t> bytes) {
  const auto base = images_.resolve(image);
  return make(file, [&](const fs::path& part) { disks_.create_overlay(base, part, bytes); });
}

std::uint64_t DiskFiles::make_copy(const fs::path& file, const fs::path& source) {
  return make(file, [&](const fs::path& part) { disks_.flatten(source, part, copy_timeout_); });
}

std::uint64_t DiskFiles::make_at_snapshot(const fs::path& file, const fs::path& source,
                                          const std::string& snapshot) {
  return make(file, [&](const fs::path& part) {
    disks_.copy_at_snapshot(source, snapshot, part, std::nullopt, copy_timeout_);
  });
}

std::uint64_t DiskFiles::adopt(const fs::path& file, const fs::path& staged) {
  return make(file, [&](const fs::path& part) { fs::rename(staged, part); });
}

std::optional<std::uint64_t> DiskFiles::header_virtual_size(const fs::path& file) const {
  try {
    if (const auto header = image::read_qcow2_header(file)) return header->virtual_size;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::uint64_t DiskFiles::image_size_hint(const spec::Image& image) const {
  if (const auto file = images_.local_file(image)) return header_virtual_size(*file).value_or(0);
  return 0;
}

std::size_t DiskFiles::sweep_leftovers() {
  std::size_t gone = 0;
  std::error_code ec;
  const auto remove = [&](const fs::path& file) {
    if (fs::remove(file, ec)) ++gone;
  };
  for (const auto& entry : fs::directory_iterator(volumes_ / "staging", ec)) remove(entry.path());
  for (const auto& owner : fs::directory_iterator(volumes_, ec)) {
    if (!owner.is_directory(ec) || owner.path().filename() == "staging") continue;
    for (const auto& entry : fs::directory_iterator(owner.path(), ec))
      if (entry.path().string().ends_with(".qcow2.part")) remove(entry.path());
  }
  return gone;
}

std::string DiskFiles::standalone_problem(const fs::path& file,
                                          std::uint64_t max_virtual_size) const {
  return image::standalone_qcow2_problem(file, {max_virtual_size});
}

void DiskFiles::remove(const fs::path& file) {
  std::error_code ec;
  fs::remove(file, ec);
  if (ec)
    throw EngineError(EngineError::Kind::Conflict,
                      "cannot remove the disk's file (" + ec.message() + ")");
}

std::uint64_t DiskFiles::virtual_size(const fs::path& file) {
  return disks_.info(file).virtual_size;
}

}  // namespace bowline::engine
