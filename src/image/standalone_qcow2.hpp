// Whether a file may become a disk of its own: a qcow2 that reads nothing outside itself
// (no backing file, no external data file: either could name any file of this host, another
// user's disk, for the guest to read), with a virtual size and an L1 table within bounds (a
// few crafted bytes must not make bowline or QEMU allocate without limit).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace bowline::image {

struct StandaloneLimits {
  std::uint64_t max_virtual_size = UINT64_MAX;
};

// What is wrong with `file` as a standalone disk, in words for the person who sent it (never
// its path), or empty when nothing is.
std::string standalone_qcow2_problem(const std::filesystem::path& file,
                                     const StandaloneLimits& limits = {});

}  // namespace bowline::image
