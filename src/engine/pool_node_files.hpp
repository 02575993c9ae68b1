// A space's files in a libvirt storage pool (a dir pool) of a host elsewhere, side by side as
// <domain>.disk.qcow2, .seed.iso, .console.log and .nvram.fd, made and read through libvirt
// alone: the host needs libvirtd, and shares no file system with the server. Base images are
// uploaded once through a libvirt stream, named by their digest (bowline-base-<sha256>.qcow2)
// beside a marker volume that says the upload finished, and reused by every space after.
#pragma once

#include <map>
#include <mutex>
#include <tuple>

#include "engine/node_files.hpp"
#include "libvirt/hypervisor.hpp"

namespace bowline::engine {

class PoolNodeFiles final : public NodeFiles {
 public:
  // `hypervisor` (the node's connection) must outlive this.
  PoolNodeFiles(libvirt::Hypervisor& hypervisor, std::string pool)
      : hypervisor_(hypervisor), pool_(std::move(pool)) {}

  // The pool's directory on its host: the node's images path (asked of libvirt).
  std::string directory();

  bool side_by_side() const override { return true; }
  BaseImage place_base(const std::string& local) override;
  bool exists(const std::string& path) override;
  void make_space_place(const plan::Plan&) override {}
  void create_overlay(const BaseImage& base, const std::string& path,
                      std::optional<std::uint64_t> size) override;
  void grow(const std::string& path, std::uint64_t size) override;
  void write_seed(const plan::Plan& plan, const std::string& iso) override;
  void tighten(const plan::Plan&) override {}  // made 0600 (NewVolume::mode)
  void remove_space(const std::string& domain) override;
  bool any_left(const std::string& domain) override;
  std::string console_tail(const std::string& domain, std::size_t max_bytes) override;
  void fetch(const std::string& path, const std::string& local) override;
  void put(const std::string& local, const std::string& path) override;

 private:
  // The sha256 of a local file, remembered by its size and modification time.
  std::string digest_of(const std::string& local);
  void upload_new(const std::string& name, const std::string& local, unsigned mode);

  libvirt::Hypervisor& hypervisor_;
  const std::string pool_;
  std::mutex mutex_;  // one base upload at a time; guards the two below
  std::map<std::string, std::tuple<std::uint64_t, std::int64_t, std::string>> digests_;
  std::map<std::string, std::string> seeds_;  // domain -> the digest of the seed uploaded
};

// The volume name of a path in the pool (its last component).
std::string volume_name(const std::string& path);

}  // namespace bowline::engine
