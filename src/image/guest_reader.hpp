// Reads a disk as its guest sees it (the backing chain folded in): what an export streams from.
#pragma once

#include <cstdint>

namespace bowline::image {

class GuestReader {
 public:
  virtual ~GuestReader() = default;
  virtual std::uint64_t size() const = 0;  // the guest's view, in bytes
  // Exactly `length` bytes at `offset` (at most 32 MiB, within size()). Throws DiskError.
  virtual void read(std::uint64_t offset, char* out, std::uint32_t length) = 0;
};

}  // namespace bowline::image
