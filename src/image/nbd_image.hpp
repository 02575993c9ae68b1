// The guest's view of a disk image, its backing chain folded in, read through qemu-nbd on a
// private unix socket (the NBD protocol's fixed newstyle handshake and simple replies: all
// qemu-nbd needs). What an export streams from: qemu-img cannot write to a pipe, and QEMU's
// own block layer is the only reader of every qcow2 feature (compressed clusters of cloud
// images, backing chains) that should be trusted with the owner's data.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "image/guest_reader.hpp"

namespace bowline::image {

class NbdImage : public GuestReader {
 public:
  // Starts `qemu-nbd --read-only` on `image` with its socket in `socket_dir` (private, made
  // here) and makes `connections` connections to it (each one a reader of its own, for one
  // thread at a time). Throws DiskError when it does not come up within 10 s.
  NbdImage(const std::filesystem::path& image, const std::filesystem::path& socket_dir,
           const std::string& qemu_nbd = "qemu-nbd", std::size_t connections = 1);
  ~NbdImage() override;  // disconnects and ends qemu-nbd
  NbdImage(const NbdImage&) = delete;
  NbdImage& operator=(const NbdImage&) = delete;

  std::uint64_t size() const override { return size_; }
  void read(std::uint64_t offset, char* out, std::uint32_t length) override;  // connection 0

  // Why more than one: qemu-nbd decompresses each request on a thread of its own, and one
  // request at a time leaves all but one core idle on a compressed cloud image.
  std::size_t connections() const { return connections_.size(); }
  GuestReader& connection(std::size_t i);

 private:
  class Connection;
  void stop();

  std::filesystem::path socket_dir_, socket_;
  pid_t pid_ = -1;
  std::uint64_t size_ = 0;
  std::vector<std::unique_ptr<Connection>> connections_;
};

}  // namespace bowline::image
