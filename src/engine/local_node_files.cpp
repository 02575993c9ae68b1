#include "engine/local_node_files.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "engine/readiness.hpp"

namespace bowline::engine {

namespace fs = std::filesystem;

bool LocalNodeFiles::exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

void LocalNodeFiles::make_space_place(const plan::Plan& plan) {
  std::error_code ec;
  if (!fs::exists(plan.space_dir, ec)) fs::create_directories(plan.space_dir);
}

void LocalNodeFiles::create_overlay(const BaseImage& base, const std::string& path,
                                    std::optional<std::uint64_t> size) {
  disks_.create_overlay(base.local, path, size);
}

void LocalNodeFiles::grow(const std::string& path, std::uint64_t size) {
  disks_.grow(path, size);
}

// Rewrites the seed only when its bytes change (a rename: a booting guest never sees half).
void LocalNodeFiles::write_seed(const plan::Plan& plan, const std::string& iso) {
  std::string current;
  if (std::ifstream in{plan.seed_iso, std::ios::binary})
    current.assign(std::istreambuf_iterator<char>(in), {});
  if (current == iso) return;
  const auto tmp = plan.seed_iso + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  out.write(iso.data(), static_cast<std::streamsize>(iso.size()));
  out.close();
  if (!out) throw std::runtime_error("cannot write " + tmp);
  // The seed holds the guest's host key and password hash: for QEMU only (libvirt gives the
  // file to the QEMU user when the domain starts).
  fs::permissions(tmp, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  fs::rename(tmp, plan.seed_iso);
}

// A space's files are its owner's data (the disk), its secrets (the seed: host key, password
// hash) and its firmware state: no other local account may read them. The directory only lets
// QEMU's user through to the files libvirt hands it at start (0711: no listing); each file is
// 0600 (libvirt's dynamic ownership gives it to the QEMU user while the domain runs; the
// console log may hold what was typed on the console). Applied at every start, so a space made
// by an older bowline is tightened too.
void LocalNodeFiles::tighten(const plan::Plan& plan) {
  std::error_code ec;
  fs::permissions(plan.space_dir,
                  fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::replace, ec);
  std::vector<std::string> files{plan.system_disk.path, plan.seed_iso, plan.firmware.nvram,
                                 plan.console_log};
  for (const auto& d : plan.data_disks) files.push_back(d.path);  // the owner's disk objects
  for (const auto& file : files)
    if (!file.empty() && fs::exists(file, ec))
      fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write,
                      fs::perm_options::replace, ec);
}

void LocalNodeFiles::remove_space(const std::string& domain) {
  std::error_code ec;
  const auto dir = plan::space_dir(node_.images_path, domain);
  fs::remove_all(dir, ec);
  if (ec) throw std::runtime_error("cannot remove " + dir + ": " + ec.message());
}

bool LocalNodeFiles::any_left(const std::string& domain) {
  return exists(plan::space_dir(node_.images_path, domain));
}

std::string LocalNodeFiles::console_tail(const std::string& domain, std::size_t max_bytes) {
  return readiness_text(plan::space_file(node_, domain, "console.log"), max_bytes);
}

void LocalNodeFiles::fetch(const std::string& path, const std::string& local) {
  fs::copy_file(path, local);
}

void LocalNodeFiles::put(const std::string& local, const std::string& path) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  fs::copy_file(local, path);  // fails on an existing file
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
}

}  // namespace bowline::engine
