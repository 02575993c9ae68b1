// A small in-process writer for ISO 9660 images with Joliet names, enough for a cloud-init
// NoCloud seed (volume id `cidata`, a flat root directory holding user-data, meta-data and
// network-config). See iso9660_writer.cpp for the layout.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace bowline::guest {

struct IsoFile {
  std::string name;
  std::string content;
};

// Limits checked by write_iso9660.
inline constexpr std::size_t kIsoMaxFileSize = 16u * 1024u * 1024u;
inline constexpr std::size_t kIsoMaxNameLength = 64;      // Joliet allows 64 UCS-2 characters
inline constexpr std::size_t kIsoMaxVolumeIdLength = 16;  // Joliet volume id: 16 UCS-2 chars

// Returns a complete ISO 9660 image (primary + Joliet volume descriptors) holding `files` in
// its root directory. The output is a pure function of the input: timestamps are fixed and
// the order of `files` does not matter.
//
// Throws std::invalid_argument if the volume id is empty, longer than kIsoMaxVolumeIdLength or
// has characters outside [A-Za-z0-9._-]; if a file name is empty, longer than
// kIsoMaxNameLength, has characters outside [A-Za-z0-9._-], is "." or "..", or ends with '.'
// (Linux drops trailing dots from Joliet names); if two names differ only in case (or not at
// all); or if a file is larger than kIsoMaxFileSize.
std::string write_iso9660(std::string_view volume_id, const std::vector<IsoFile>& files);

}  // namespace bowline::guest
