#include "engine/space_export.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "engine/disk_read_ahead.hpp"
#include "engine/space_archive.hpp"
#include "image/chain_reader.hpp"
#include "image/errors.hpp"
#include "image/nbd_image.hpp"

namespace bowline::engine {

namespace {

constexpr std::uint64_t kRead = 4 * 1024 * 1024;  // per NBD read: runs of clusters, coalesced
// Readers at once, each with a qemu-nbd connection of its own (for what bowline does not read
// itself): inflating compressed clusters is the costliest step and each reader does its own.
// On 2 cores one, two or three readers measured the same (CPU-bound either way); two keep a
// core busy inflating while the other hashes and sends on a bigger host.
constexpr std::size_t kReaders = 2;

class Stopped : public std::exception {};  // the reader went away

}  // namespace

SpaceArchiveStream::SpaceArchiveStream(ExportSource source, image::Disks& disks, std::int64_t mtime)
    : source_(std::move(source)), disks_(disks), mtime_(mtime) {
  const auto info = disks.info(source_.disk);
  extents_ = image::data_extents_from_map(disks.map_json(source_.disk));
  layout_ = std::make_unique<image::Qcow2StreamLayout>(info.virtual_size, extents_);
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
    image::NbdImage nbd(source_.disk, work_dir, "qemu-nbd", kReaders);
    // Mapped again now that qemu-nbd holds the image, and with it QEMU's lock (no domain can
    // start on it now): the layout came from the first map, and a disk that changed in
    // between would not fit it.
    auto map = image::map_entries(disks_.map_json(source_.disk));
    if (image::data_extents(map) != extents_)
      throw image::DiskError("the disk changed after the export began (was the space started?)");
    const auto chain = image::chain_images(disks_.chain_json(source_.disk));
    std::vector<std::unique_ptr<image::ChainReader>> readers;
    std::vector<image::GuestReader*> views;
    for (std::size_t i = 0; i < nbd.connections(); ++i) {
      readers.push_back(std::make_unique<image::ChainReader>(map, chain, nbd.connection(i)));
      views.push_back(readers.back().get());
    }
    const auto& layout = *layout_;
    writer.begin(archive::kDiskMember, layout.file_size());
    writer.write(layout.metadata());
    // Read and hashed ahead on threads of their own (each run hashed in order by the thread
    // that read it, while it is in that core's cache), while this one frames and sends.
    auto& hash = writer.hash();
    DiskReadAhead runs(views, layout.data_clusters(), image::kQcow2StreamCluster, kRead, 4,
                       [&hash](const char* bytes, std::size_t size) { hash.update(bytes, size); });
    while (auto run = runs.next()) {
      writer.write_hashed(std::string_view(run->bytes.data(), run->bytes.size()));
      runs.recycle(std::move(*run));
    }
    writer.end();
    writer.finish();
  } catch (const Stopped&) {
    return;
  }
}

}  // namespace bowline::engine
