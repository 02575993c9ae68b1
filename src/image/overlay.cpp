#include "image/overlay.hpp"

#include <nlohmann/json.hpp>

#include <system_error>

#include "image/qcow2.hpp"
#include "util/strings.hpp"

namespace bowline::image {
namespace fs = std::filesystem;

namespace {

std::string describe_size(std::uint64_t bytes) {
  constexpr std::uint64_t kMiB = 1024 * 1024, kGiB = kMiB * 1024;
  std::string text = std::to_string(bytes) + " bytes";
  if (bytes != 0 && bytes % kGiB == 0) return text + " (" + std::to_string(bytes / kGiB) + " GiB)";
  if (bytes != 0 && bytes % kMiB == 0) return text + " (" + std::to_string(bytes / kMiB) + " MiB)";
  return text;
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + a;
  return out;
}

// A base image that names another file makes QEMU open that file (or, through a json: or nbd:
// name, connect to a server) with the rights of the space: an image from the internet could
// read a host file into the guest. bowline's bases stand alone.
void refuse_indirection(const fs::path& base, const Qcow2Header& header) {
  const std::string why =
      ": bowline refuses base images that point at other files (such an image can make QEMU "
      "read a file of this host or connect to an internal server); make a standalone copy "
      "with qemu-img convert -O qcow2 " +
      base.string() + " NEW.qcow2 and use that";
  if (header.backing_file)
    throw DiskError("the base image " + base.string() + " has a backing file (" +
                    *header.backing_file + ")" + why);
  if (header.external_data_file)
    throw DiskError("the base image " + base.string() + " keeps its data in an external file" +
                    (header.external_data_file->empty() ? std::string()
                                                        : " (" + *header.external_data_file + ")") +
                    why);
}

}  // namespace

std::uint64_t sector_aligned(std::uint64_t bytes) {
  return (bytes + 511) / 512 * 512;
}

Disks::Disks(util::ProcessRunner& runner, DiskOptions options)
    : runner_(runner), options_(std::move(options)) {}

util::ProcessResult Disks::run(const std::vector<std::string>& argv) {
  auto result = runner_.run(argv, options_.timeout);
  if (result.timed_out)
    throw DiskError(command_line(argv) + " did not finish within " +
                    std::to_string(options_.timeout.count() / 1000) + " s");
  if (result.exit_code != 0) {
    auto reason = util::trim(result.err);
    if (reason.empty()) reason = "exit code " + std::to_string(result.exit_code);
    throw DiskError(command_line(argv) + " failed: " + reason);
  }
  return result;
}

DiskInfo Disks::info(const fs::path& image) {
  const auto result = run({options_.qemu_img, "info", "-U", "--output=json", image.string()});
  try {
    const auto json = nlohmann::json::parse(result.out);
    DiskInfo info;
    info.virtual_size = json.at("virtual-size").get<std::uint64_t>();
    info.format = json.at("format").get<std::string>();
    if (json.contains("backing-filename"))
      info.backing_file = json["backing-filename"].get<std::string>();
    if (json.contains("backing-filename-format"))
      info.backing_format = json["backing-filename-format"].get<std::string>();
    return info;
  } catch (const nlohmann::json::exception& e) {
    throw DiskError("qemu-img info " + image.string() +
                    " gave output bowline cannot read: " + e.what());
  }
}

void Disks::create_blank(const fs::path& disk, std::uint64_t size_bytes) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(disk, ec)))
    throw DiskError("the disk " + disk.string() + " already exists; it is not overwritten");
  run({options_.qemu_img, "create", "-q", "-f", "qcow2", disk.string(),
       std::to_string(sector_aligned(size_bytes))});
}

void Disks::flatten(const fs::path& source, const fs::path& copy,
                    std::chrono::milliseconds timeout) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(copy, ec)))
    throw DiskError("the disk " + copy.string() + " already exists; it is not overwritten");
  const std::vector<std::string> argv{options_.qemu_img, "convert",       "-U",         "-O",
                                      "qcow2",           source.string(), copy.string()};
  auto result = runner_.run(argv, timeout);
  if (result.timed_out || result.exit_code != 0) {
    fs::remove(copy, ec);
    auto reason = result.timed_out ? std::string("it ran out of time") : util::trim(result.err);
    throw DiskError(command_line(argv) + " failed: " + reason);
  }
}

void Disks::copy_at_snapshot(const fs::path& source, const std::string& snapshot,
                             const fs::path& copy, const std::optional<fs::path>& base,
                             std::chrono::milliseconds timeout) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(copy, ec)))
    throw DiskError("the disk " + copy.string() + " already exists; it is not overwritten");
  // -U: a running domain holds the source; what is read is the snapshot, which nothing writes.
  std::vector<std::string> argv{options_.qemu_img,           "convert", "-U",   "-f", "qcow2", "-l",
                                "snapshot.name=" + snapshot, "-O",      "qcow2"};
  if (base) {
    // Only what differs from the base is copied: the copy is an overlay on the same base.
    argv.insert(argv.end(), {"-B", fs::absolute(*base).lexically_normal().string(), "-F", "qcow2"});
  }
  argv.insert(argv.end(), {source.string(), copy.string()});
  auto result = runner_.run(argv, timeout);
  if (result.timed_out || result.exit_code != 0) {
    fs::remove(copy, ec);
    auto reason = result.timed_out ? std::string("it ran out of time") : util::trim(result.err);
    throw DiskError(command_line(argv) + " failed: " + reason);
  }
}

std::string Disks::map_json(const fs::path& image) {
  return run({options_.qemu_img, "map", "-U", "--output=json", "-f", "qcow2", image.string()}).out;
}

std::string Disks::chain_json(const fs::path& image) {
  return run({options_.qemu_img, "info", "-U", "--backing-chain", "--output=json", "-f", "qcow2",
              image.string()})
      .out;
}

void Disks::resize(const fs::path& disk, std::uint64_t bytes) {
  run({options_.qemu_img, "resize", "-f", "qcow2", disk.string(), std::to_string(bytes)});
}

void Disks::create_overlay(const fs::path& base, const fs::path& overlay,
                           std::optional<std::uint64_t> size_bytes) {
  const auto absolute_base = fs::absolute(base).lexically_normal();
  std::error_code ec;
  if (fs::exists(fs::symlink_status(overlay, ec)))
    throw DiskError("the disk " + overlay.string() + " already exists; it is not overwritten");

  const auto base_header = read_qcow2_header(absolute_base);
  if (!base_header) {
    // Only on this failure path is qemu-img asked, so the message can name the format.
    std::string format = "not qcow2";
    try {
      format = info(absolute_base).format;
    } catch (const DiskError&) {
    }
    throw DiskError("the base image " + absolute_base.string() + " is " + format +
                    ", not qcow2: convert it with qemu-img convert -O qcow2");
  }
  refuse_indirection(absolute_base, *base_header);
  std::uint64_t target = base_header->virtual_size;
  if (size_bytes) {
    const auto wanted = sector_aligned(*size_bytes);
    if (wanted < base_header->virtual_size)
      throw DiskError("the disk size " + describe_size(*size_bytes) +
                      " is smaller than the base image's virtual size " +
                      describe_size(base_header->virtual_size) + " (" + absolute_base.string() +
                      "): a disk can only grow, so set disk to at least that or leave it out");
    target = wanted;
  }
  write_qcow2_overlay(overlay, absolute_base, "qcow2", target);
}

bool Disks::grow(const fs::path& disk, std::uint64_t size_bytes) {
  const auto target = sector_aligned(size_bytes);
  const auto header = read_qcow2_header(disk);
  const auto current = header ? header->virtual_size : info(disk).virtual_size;
  if (target <= current) return false;
  resize(disk, target);
  return true;
}

}  // namespace bowline::image
