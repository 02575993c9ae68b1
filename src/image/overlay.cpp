#include "image/overlay.hpp"

#include <nlohmann/json.hpp>

#include <system_error>

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

void Disks::resize(const fs::path& disk, std::uint64_t bytes) {
  run({options_.qemu_img, "resize", "-f", "qcow2", disk.string(), std::to_string(bytes)});
}

void Disks::create_overlay(const fs::path& base, const fs::path& overlay,
                           std::optional<std::uint64_t> size_bytes) {
  const auto absolute_base = fs::absolute(base).lexically_normal();
  std::error_code ec;
  if (fs::exists(fs::symlink_status(overlay, ec)))
    throw DiskError("the disk " + overlay.string() + " already exists; it is not overwritten");

  const auto base_info = info(absolute_base);
  if (base_info.format != "qcow2")
    throw DiskError("the base image " + absolute_base.string() + " is " + base_info.format +
                    ", not qcow2: convert it with qemu-img convert -O qcow2");
  std::optional<std::uint64_t> target;
  if (size_bytes) {
    target = sector_aligned(*size_bytes);
    if (*target < base_info.virtual_size)
      throw DiskError("the disk size " + describe_size(*size_bytes) +
                      " is smaller than the base image's virtual size " +
                      describe_size(base_info.virtual_size) + " (" + absolute_base.string() +
                      "): a disk can only grow, so set disk to at least that or leave it out");
  }

  try {
    run({options_.qemu_img, "create", "-f", "qcow2", "-F", "qcow2", "-b", absolute_base.string(),
         overlay.string()});
    if (target && *target > base_info.virtual_size) resize(overlay, *target);
  } catch (...) {
    fs::remove(overlay, ec);
    throw;
  }
}

bool Disks::grow(const fs::path& disk, std::uint64_t size_bytes) {
  const auto target = sector_aligned(size_bytes);
  if (target <= info(disk).virtual_size) return false;
  resize(disk, target);
  return true;
}

}  // namespace bowline::image
