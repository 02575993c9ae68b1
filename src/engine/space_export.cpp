#include "engine/space_export.hpp"

#include <algorithm>
#include <vector>

#include "engine/disk_read_ahead.hpp"
#include "engine/space_archive.hpp"
#include "image/errors.hpp"
#include "image/nbd_image.hpp"

namespace bowline::engine {

namespace {

constexpr std::uint64_t kRead = 4 * 1024 * 1024;  // per NBD read: runs of clusters, coalesced

class Stopped : public std::exception {};  // the reader went away

}  // namespace

SpaceArchiveStream::SpaceArchiveStream(ExportSource source, image::Disks& disks, std::int64_t mtime)
    : source_(std::move(source)), mtime_(mtime) {
  const auto info = disks.info(source_.disk);
  layout_ = std::make_unique<image::Qcow2StreamLayout>(
      info.virtual_size, image::data_extents_from_map(disks.map_json(source_.disk)));
  size_ = archive::archive_size({{archive::kSpaceMember, source_.space_json.size(), ""},
                                 {archive::kTemplateMember, source_.template_yaml.size(), ""},
                                 {archive::kDiskMember, layout_->file_size(), ""}});
}

void SpaceArchiveStream::run(const std::filesystem::path& work_dir,
                             const std::function<bool(std::string_view)>& sink) {
  archive::ArchiveWriter writer(
      [&](std::string_view bytes) {
        if (!sink(bytes)) throw Stopped();
      },
      mtime_);
  try {
    writer.add(archive::kSpaceMember, source_.space_json);
    writer.add(archive::kTemplateMember, source_.template_yaml);
    image::NbdImage disk(source_.disk, work_dir);
    const auto& layout = *layout_;
    writer.begin(archive::kDiskMember, layout.file_size());
    writer.write(layout.metadata());
    // Read ahead on a thread of its own: qemu-nbd's reads overlap the hashing and sending.
    DiskReadAhead runs(disk, layout.data_clusters(), image::kQcow2StreamCluster, kRead);
    while (auto run = runs.next())
      writer.write(std::string_view(run->bytes.data(), run->bytes.size()));
    writer.end();
    writer.finish();
  } catch (const Stopped&) {
    return;
  }
}

}  // namespace bowline::engine
