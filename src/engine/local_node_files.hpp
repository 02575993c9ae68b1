// A space's files on the server's own file system, for this host's libvirt: one directory per
// space under the images path (<images>/<domain>/disk.qcow2, seed.iso, console.log, nvram.fd).
#pragma once

#include "engine/node_files.hpp"
#include "image/overlay.hpp"

namespace bowline::engine {

class LocalNodeFiles final : public NodeFiles {
 public:
  // Both must outlive this.
  LocalNodeFiles(image::Disks& disks, const plan::NodeSettings& node)
      : disks_(disks), node_(node) {}

  bool side_by_side() const override { return false; }
  BaseImage place_base(const std::string& local) override { return {local, local}; }
  bool exists(const std::string& path) override;
  void make_space_place(const plan::Plan& plan) override;
  void create_overlay(const BaseImage& base, const std::string& path,
                      std::optional<std::uint64_t> size) override;
  void grow(const std::string& path, std::uint64_t size) override;
  void write_seed(const plan::Plan& plan, const std::string& iso) override;
  void tighten(const plan::Plan& plan) override;
  void remove_space(const std::string& domain) override;
  bool any_left(const std::string& domain) override;
  std::string console_tail(const std::string& domain, std::size_t max_bytes) override;
  void fetch(const std::string& path, const std::string& local) override;
  void put(const std::string& local, const std::string& path) override;

 private:
  image::Disks& disks_;
  const plan::NodeSettings& node_;
};

}  // namespace bowline::engine
