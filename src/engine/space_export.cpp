#include "engine/space_export.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "engine/disk_read_ahead.hpp"
#include "engine/space_archive.hpp"
#include "image/chain_reader.hpp"
#include "image/errors.hpp"
#include "image/nbd_image.hpp"

namespace bowline::engine {

namespace {

constexpr std::uint64_t C = image::kQcow2StreamCluster;
constexpr std::uint64_t kRun = 4 * 1024 * 1024;  // bytes per run: pieces, coalesced
// Readers at once, each with a qemu-nbd connection of its own (for what bowline does not read
// itself): inflating compressed clusters was the costliest step and each reader does its own.
// On 2 cores one, two or three readers measured the same (CPU-bound either way); two keep a
// core busy while the other hashes and sends on a bigger host.
constexpr std::size_t kReaders = 2;

class Stopped : public std::exception {};  // the reader went away

// Runs of the disk's data, in file order: consecutive pieces up to kRun bytes, from the first
// piece's place to the end of the last (the padding between them included).
struct Run {
  std::size_t first = 0, count = 0;  // pieces
  std::uint64_t at = 0, size = 0;    // bytes past the metadata
};

std::vector<Run> runs_of(const std::vector<image::Qcow2StreamLayout::Piece>& pieces) {
  std::vector<Run> out;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const auto end = pieces[i].at + pieces[i].size();
    if (!out.empty() && end - out.back().at <= kRun) {
      out.back().count++;
      out.back().size = end - out.back().at;
    } else {
      // A run starts where the last one ended: its padding before the first piece is its own.
      const auto at = out.empty() ? 0 : out.back().at + out.back().size;
      out.push_back({i, 1, at, end - at});
    }
  }
  return out;
}

// Fills one run: zeros where no piece is, plain clusters read as the guest sees them (those
// that follow each other at once), stored ones as the file holds them.
void fill_run(image::ChainReader& disk, const std::vector<image::Qcow2StreamLayout::Piece>& pieces,
              const Run& run, char* out) {
  std::uint64_t at = run.at;  // where `out` has been filled to
  for (std::size_t i = run.first; i < run.first + run.count;) {
    const auto& piece = pieces[i];
    std::memset(out + (at - run.at), 0, piece.at - at);
    at = piece.at;
    if (piece.sectors) {
      disk.read_stored(piece.cluster, C, piece.sectors, out + (at - run.at));
      at += piece.size();
      ++i;
      continue;
    }
    std::size_t n = 1;
    while (i + n < run.first + run.count && !pieces[i + n].sectors &&
           pieces[i + n].cluster == piece.cluster + n && pieces[i + n].at == piece.at + n * C)
      ++n;
    const auto offset = piece.cluster * C;
    const auto bytes = n * C;
    std::uint64_t readable = 0;
    if (offset < disk.size()) {
      readable = std::min<std::uint64_t>(bytes, disk.size() - offset);
      disk.read(offset, out + (at - run.at), static_cast<std::uint32_t>(readable));
    }
    std::memset(out + (at - run.at) + readable, 0, bytes - readable);  // past the disk's end
    at += bytes;
    i += n;
  }
}

}  // namespace

SpaceArchiveStream::SpaceArchiveStream(ExportSource source, image::Disks& disks, std::int64_t mtime)
    : source_(std::move(source)), disks_(disks), mtime_(mtime) {
  const auto info = disks.info(source_.disk);
  auto map = image::map_entries(disks.map_json(source_.disk));
  extents_ = image::data_extents(map);
  // Which clusters are stored compressed, from the chain's own tables (no QEMU needed).
  image::ChainReader tables(map, image::chain_images(disks.chain_json(source_.disk)));
  layout_ = std::make_unique<image::Qcow2StreamLayout>(info.virtual_size, extents_,
                                                       tables.stored_clusters(C));
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
    const auto chain = image::chain_images(disks_.chain_json(source_.disk));
    std::vector<std::unique_ptr<image::ChainReader>> readers;
    for (std::size_t i = 0; i < nbd.connections(); ++i)
      readers.push_back(std::make_unique<image::ChainReader>(map, chain, nbd.connection(i)));
    if (image::data_extents(map) != extents_ || readers[0]->stored_clusters(C) != layout_->stored())
      throw image::DiskError("the disk changed after the export began (was the space started?)");
    const auto& layout = *layout_;
    writer.begin(archive::kDiskMember, layout.file_size());
    const auto metadata = layout.metadata();
    writer.write(metadata);
    const auto& pieces = layout.pieces();
    const auto runs = runs_of(pieces);
    std::vector<std::uint64_t> sizes;
    for (const auto& r : runs) sizes.push_back(r.size);
    // Read and hashed ahead on threads of their own (each run hashed in order by the thread
    // that read it, while it is in that core's cache), while this one frames and sends.
    auto& hash = writer.hash();
    DiskReadAhead ahead(
        readers.size(), sizes,
        [&](std::size_t reader, std::size_t run, char* out, std::size_t) {
          fill_run(*readers[reader], pieces, runs[run], out);
        },
        4, [&hash](const char* bytes, std::size_t size) { hash.update(bytes, size); });
    while (auto run = ahead.next()) {
      writer.write_hashed(std::string_view(run->bytes.data(), run->bytes.size()));
      ahead.recycle(std::move(*run));
    }
    // The last cluster's rest.
    const auto written = metadata.size() + (runs.empty() ? 0 : runs.back().at + runs.back().size);
    writer.write(std::string(layout.file_size() - written, '\0'));
    writer.end();
    writer.finish();
  } catch (const Stopped&) {
    return;
  }
}

}  // namespace bowline::engine
