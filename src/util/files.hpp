// A whole file read into memory, for the small files bowline reads at once (configs, templates,
// certificates, the web UI's files, QEMU's logs).
#pragma once

#include <optional>
#include <string>

namespace bowline::util {

// The file's bytes, or nothing when it cannot be opened or read.
std::optional<std::string> read_file(const std::string& path);

}  // namespace bowline::util
