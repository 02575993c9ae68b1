#include "engine/pool_node_files.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>

#include "engine/engine_error.hpp"
#include "image/errors.hpp"
#include "image/qcow2.hpp"
#include "image/sha256.hpp"
#include "util/hash.hpp"

namespace bowline::engine {

namespace fs = std::filesystem;

namespace {

// Every file a space has in the pool: bowline names them (plan::space_file), so a delete takes
// exactly these and never another space's whose domain name starts the same.
constexpr std::array kSpaceFiles{"disk.qcow2", "seed.iso", "console.log", "nvram.fd"};

libvirt::NewVolume raw_volume(const std::string& name, std::uint64_t size, unsigned mode = 0600) {
  libvirt::NewVolume v;
  v.name = name;
  v.format = "raw";
  v.capacity = size;
  v.mode = mode;
  return v;
}

std::string space_volume(const std::string& domain, const char* leaf) {
  return domain + "." + leaf;
}

}  // namespace

std::string volume_name(const std::string& path) {
  return fs::path(path).filename().string();
}

std::string PoolNodeFiles::directory() {
  return hypervisor_.pool_path(pool_);
}

std::string PoolNodeFiles::digest_of(const std::string& local) {
  std::error_code ec;
  const auto size = fs::file_size(local, ec);
  if (ec) throw std::runtime_error("cannot read " + local + ": " + ec.message());
  const auto mtime = fs::last_write_time(local, ec).time_since_epoch().count();
  if (auto it = digests_.find(local);
      it != digests_.end() && std::get<0>(it->second) == size && std::get<1>(it->second) == mtime)
    return std::get<2>(it->second);
  auto digest = image::sha256_file(local);
  digests_[local] = {size, mtime, digest};
  return digest;
}

// A new volume `name` holding the local file's bytes; nothing is left when the upload fails.
void PoolNodeFiles::upload_new(const std::string& name, const std::string& local, unsigned mode) {
  const auto size = fs::file_size(local);
  std::ifstream in(local, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + local);
  hypervisor_.create_volume(pool_, raw_volume(name, size, mode));
  try {
    hypervisor_.upload_volume(pool_, name, size, [&](char* buffer, std::size_t room) {
      in.read(buffer, static_cast<std::streamsize>(room));
      return static_cast<std::size_t>(in.gcount());
    });
  } catch (...) {
    try {
      hypervisor_.delete_volume(pool_, name);
    } catch (const std::exception&) {  // the upload's error says more
    }
    throw;
  }
}

// Uploaded once per node: the marker volume is made only after the image is whole, so an upload
// cut short (a killed server, a dropped link) is made again rather than booted from.
BaseImage PoolNodeFiles::place_base(const std::string& local) {
  std::lock_guard lock(mutex_);
  const auto digest = digest_of(local);
  const auto name = "bowline-base-" + digest.substr(0, 32) + ".qcow2";
  const auto marker = name + ".done";
  if (!hypervisor_.volume(pool_, marker)) {
    hypervisor_.delete_volume(pool_, name);
    upload_new(name, local, 0644);
    hypervisor_.create_volume(pool_, raw_volume(marker, 0));
  }
  const auto info = hypervisor_.volume(pool_, name);
  if (!info) throw std::runtime_error("the base image " + name + " vanished from pool " + pool_);
  return {local, info->path};
}

bool PoolNodeFiles::exists(const std::string& path) {
  return hypervisor_.volume(pool_, volume_name(path)).has_value();
}

void PoolNodeFiles::create_overlay(const BaseImage& base, const std::string& path,
                                   std::optional<std::uint64_t> size) {
  const auto header = image::read_qcow2_header(base.local);
  if (!header)
    throw image::DiskError("the base image " + base.local +
                           " is not qcow2: convert it with qemu-img convert -O qcow2");
  std::uint64_t capacity = header->virtual_size;
  if (size) {
    if (*size < header->virtual_size)
      throw image::DiskError(
          "the disk size is smaller than the base image's virtual size: a disk "
          "can only grow, so set disk to at least that or leave it out");
    capacity = (*size + 511) / 512 * 512;
  }
  libvirt::NewVolume overlay;
  overlay.name = volume_name(path);
  overlay.capacity = capacity;
  overlay.backing_path = base.on_host;
  hypervisor_.create_volume(pool_, overlay);
}

void PoolNodeFiles::grow(const std::string& path, std::uint64_t size) {
  const auto info = hypervisor_.volume(pool_, volume_name(path));
  if (!info || info->capacity >= size) return;
  hypervisor_.resize_volume(pool_, volume_name(path), (size + 511) / 512 * 512);
}

// Uploaded again only when its bytes change; the volume is made to the seed's size each time
// (a seed's size changes with what it holds).
void PoolNodeFiles::write_seed(const plan::Plan& plan, const std::string& iso) {
  const auto digest = util::sha256_hex(iso);
  const auto name = volume_name(plan.seed_iso);
  {
    std::lock_guard lock(mutex_);
    if (const auto it = seeds_.find(plan.domain_name);
        it != seeds_.end() && it->second == digest && hypervisor_.volume(pool_, name))
      return;
  }
  hypervisor_.delete_volume(pool_, name);
  hypervisor_.create_volume(pool_, raw_volume(name, iso.size()));
  std::size_t at = 0;
  hypervisor_.upload_volume(pool_, name, iso.size(), [&](char* buffer, std::size_t room) {
    const auto n = std::min(room, iso.size() - at);
    std::copy_n(iso.data() + at, n, buffer);
    at += n;
    return n;
  });
  std::lock_guard lock(mutex_);
  seeds_[plan.domain_name] = digest;
}

void PoolNodeFiles::fetch(const std::string& path, const std::string& local) {
  std::ofstream out(local, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + local);
  hypervisor_.download_volume(pool_, volume_name(path), [&](const char* data, std::size_t n) {
    out.write(data, static_cast<std::streamsize>(n));
    if (!out) throw std::runtime_error("cannot write " + local);
  });
  out.close();
  if (!out) throw std::runtime_error("cannot write " + local);
}

void PoolNodeFiles::put(const std::string& local, const std::string& path) {
  upload_new(volume_name(path), local, 0600);
}

void PoolNodeFiles::remove_space(const std::string& domain) {
  for (const auto* leaf : kSpaceFiles) hypervisor_.delete_volume(pool_, space_volume(domain, leaf));
  std::lock_guard lock(mutex_);
  seeds_.erase(domain);
}

bool PoolNodeFiles::any_left(const std::string& domain) {
  for (const auto& v : hypervisor_.volumes(pool_))
    for (const auto* leaf : kSpaceFiles)
      if (v.name == space_volume(domain, leaf)) return true;
  return false;
}

std::string PoolNodeFiles::console_tail(const std::string& domain, std::size_t max_bytes) {
  const auto name = space_volume(domain, "console.log");
  try {
    const auto info = hypervisor_.volume(pool_, name);
    if (!info || info->capacity == 0) return {};
    const auto from = info->capacity > max_bytes ? info->capacity - max_bytes : 0;
    return hypervisor_.download_volume(pool_, name, from, info->capacity - from);
  } catch (const libvirt::HypervisorError&) {
    return {};  // not there yet (virtlogd makes it at the start), or the host is away
  }
}

}  // namespace bowline::engine
