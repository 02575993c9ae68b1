// The errors of the image library. Their messages are written for the person who runs the
// space: they name the file, the URL or the command and say what to do.
#pragma once

#include <stdexcept>

namespace bowline::image {

// Resolving or downloading a base image failed.
class ImageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Making, growing or reading a disk with qemu-img failed.
class DiskError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace bowline::image
