// Host paths out of what users read. An error from a library, qemu-img or libvirt often names
// a file of the host ("Could not open '/var/lib/...'"); the server's answers and a space's
// error keep the words and lose the path, and the log keeps the whole text.
#pragma once

#include <string>
#include <string_view>

namespace bowline::util {

// `text` with every absolute host path ("/dir/file", quoted or not) replaced by its last
// component ("file"): the reader still sees which file, not where the host keeps it. URLs
// ("https://host/a/b") and API paths given as "/api/..." are kept. A lone "/" is kept.
std::string redact_host_paths(std::string_view text);

// Whether `text` names an absolute host path that redact_host_paths would shorten.
bool names_host_path(std::string_view text);

}  // namespace bowline::util
