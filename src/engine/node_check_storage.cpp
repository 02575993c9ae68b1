// The storage checks: the images path, the cloud-image library and the base-image cache, each
// usable by bowline and reachable by QEMU's user.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine/node_check_kinds.hpp"

namespace bowline::engine::node_checks {

namespace fs = std::filesystem;

std::vector<StoragePath> storage_paths(const NodeCheckOptions& options) {
  std::vector<StoragePath> out{
      {"images-path", "images path", "server.kvm.images_path", options.images_path, true}};
  // The library and the cache hold the base images that QEMU opens as backing files.
  if (!options.cloud_image_path.empty())
    out.push_back({"cloud-image-path", "cloud-image library", "server.kvm.cloud_image_path",
                   options.cloud_image_path, false});
  if (!options.base_image_path.empty())
    out.push_back({"base-image-path", "base-image cache", "server.kvm.base_image_path",
                   options.base_image_path, true});
  return out;
}

Check check_storage_path(const StoragePath& where, const NodeCheckOptions& options,
                         const std::optional<Identity>& qemu) {
  const auto& path = where.path;
  auto c = make_check(where.name, where.what + " " + path +
                                      (where.writable ? " writable, and traversable by QEMU"
                                                      : " readable, and traversable by QEMU"));
  std::error_code ec;
  const auto absolute = fs::absolute(fs::path(path), ec).lexically_normal();
  if (!fs::exists(absolute, ec)) {
    // Where would it be made? The nearest parent that exists must take a new directory.
    auto parent = absolute.parent_path();
    while (!parent.empty() && !fs::exists(parent, ec) && parent != parent.parent_path())
      parent = parent.parent_path();
    if (::access(parent.c_str(), W_OK | X_OK) != 0) {
      c.status = CheckStatus::Missing;
      c.detail = path + " does not exist and " + parent.string() + " is not writable by bowline";
      c.fix = "install -d -m 0755 -o $(id -un) " + absolute.string();
      return c;
    }
    c.status = CheckStatus::Warn;
    c.required = false;
    c.detail = path + " does not exist yet; bowline makes it at start";
  } else if (!fs::is_directory(absolute, ec)) {
    c.status = CheckStatus::Missing;
    c.detail = path + " is not a directory";
    c.fix = "point " + where.setting + " at a directory";
    return c;
  } else if (::access(absolute.c_str(), (where.writable ? W_OK : R_OK) | X_OK) != 0) {
    c.status = CheckStatus::Missing;
    c.detail = "bowline cannot " + std::string(where.writable ? "write to " : "read ") + path +
               ": " + std::strerror(errno);
    c.fix = "chown $(id -un) " + absolute.string() + " (or run the server as its owner)";
    return c;
  }

  if (!qemu) {
    if (c.status == CheckStatus::Ok) {
      c.status = CheckStatus::Warn;
      c.required = false;
      c.detail = std::string(where.writable ? "writable" : "readable") + "; no QEMU user (" +
                 join(options.qemu_users, ", ") + ") on this host, so its access was not checked";
    }
    return c;
  }
  const auto blocked = untraversable_components(absolute.string(), *qemu);
  if (!blocked.empty()) {
    c.status = CheckStatus::Missing;
    c.required = true;
    c.detail = "the QEMU user " + qemu->name + " cannot enter " + join(blocked, ", ") +
               ": QEMU will fail to open " +
               (where.writable && where.name == "images-path" ? "the disks" : "the images") +
               " with \"Permission denied\"";
    c.fix = "setfacl -m u:" + qemu->name + ":x " + join(blocked, " ") +
            " (or chmod o+x each, or move " + where.setting + " out of a private directory)";
    return c;
  }
  if (c.status == CheckStatus::Ok)
    c.detail = std::string(where.writable ? "writable" : "readable") +
               " by bowline; every parent traversable by " + qemu->name;
  return c;
}

namespace {

// "<16 hex digits>-<name>": the cache's own layout (image/cache.hpp).
bool keyed(const std::string& name) {
  if (name.size() < 18 || name[16] != '-') return false;
  for (std::size_t i = 0; i < 16; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(name[i]))) return false;
  return true;
}

bool sidecar(const std::string& name) {
  for (const char* suffix : {".part", ".sha256", ".url"})
    if (name.ends_with(suffix)) return true;
  return name.find(".tmp") != std::string::npos;
}

}  // namespace

std::optional<Check> check_unkeyed_cache(const NodeCheckOptions& options) {
  if (options.base_image_path.empty()) return std::nullopt;
  std::vector<std::string> unkeyed;
  std::error_code ec;
  for (fs::directory_iterator it(options.base_image_path, ec), end; !ec && it != end;
       it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (it->is_regular_file(ec) && !keyed(name) && !sidecar(name)) unkeyed.push_back(name);
  }
  if (unkeyed.empty()) return std::nullopt;
  std::sort(unkeyed.begin(), unkeyed.end());
  auto c = make_check("base-image-layout", "base-image cache keyed by URL");
  c.status = CheckStatus::Warn;
  c.required = false;
  c.detail = std::to_string(unkeyed.size()) + " file(s) in " + options.base_image_path +
             " named after an URL's last segment alone (knot's layout: " + join(unkeyed, ", ") +
             "); a template naming such an URL uses the file only with a matching "
             "imageChecksum, else it downloads the URL";
  c.fix = "bowline image adopt " + options.base_image_path + "/" + unkeyed.front() +
          " --url URL (once per file, with the URL the templates name)";
  return c;
}

}  // namespace bowline::engine::node_checks
