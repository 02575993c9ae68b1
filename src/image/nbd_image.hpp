// The guest's view of a disk image, its backing chain folded in, read through qemu-nbd on a
// private unix socket (the NBD protocol's fixed newstyle handshake and simple replies: all
// qemu-nbd needs). What an export streams from: qemu-img cannot write to a pipe, and QEMU's
// own block layer is the only reader of every qcow2 feature (compressed clusters of cloud
// images, backing chains) that should be trusted with the owner's data.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "image/guest_reader.hpp"

namespace bowline::image {

class NbdImage : public GuestReader {
 public:
  // Starts `qemu-nbd --read-only` on `image` with its socket in `socket_dir` (private, made
  // here) and connects. Throws DiskError when it does not come up within 10 s.
  NbdImage(const std::filesystem::path& image, const std::filesystem::path& socket_dir,
           const std::string& qemu_nbd = "qemu-nbd");
  ~NbdImage() override;  // disconnects and ends qemu-nbd
  NbdImage(const NbdImage&) = delete;
  NbdImage& operator=(const NbdImage&) = delete;

  std::uint64_t size() const override { return size_; }
  void read(std::uint64_t offset, char* out, std::uint32_t length) override;

 private:
  void connect_socket();
  void handshake();
  void stop();

  std::filesystem::path socket_dir_, socket_;
  pid_t pid_ = -1;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::uint64_t handle_ = 0;
};

}  // namespace bowline::image
