// qcow2 headers, read and written in-process.
//
// Why bowline owns this rather than running qemu-img: an empty overlay is a fixed structure of
// four clusters (header, refcount table, one refcount block, the L1 table; QEMU's
// docs/interop/qcow2.txt), while `qemu-img info` + `qemu-img create` cost two processes and
// ~60-70 ms on a small host: more than the whole budget bowline has over a bare define+start.
// The tests check every file written here with the real qemu-img and qemu-io.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace bowline::image {

struct Qcow2Header {
  std::uint32_t version = 0;  // 2 or 3
  std::uint64_t virtual_size = 0;
  std::uint32_t cluster_bits = 0;
  std::optional<std::string> backing_file;
  std::optional<std::string> backing_format;  // from the backing-format header extension
  // The image keeps its data in another file (v3 incompatible feature bit 2): the file's name
  // from the data-file extension, or empty when the extension is missing.
  std::optional<std::string> external_data_file;
  // What a reader of the clusters needs (qcow2_compressed.hpp).
  std::uint32_t crypt_method = 0;  // 0: not encrypted
  std::uint32_t l1_size = 0;       // entries
  std::uint64_t l1_table_offset = 0;
  std::uint64_t incompatible_features = 0;  // v3; 0 for v2
  std::uint8_t compression_type = 0;        // 0: zlib, 1: zstd
};

// The header of a qcow2 file; std::nullopt when the file is not qcow2 (no qcow2 magic).
// Throws DiskError when the file cannot be read or its header is damaged.
std::optional<Qcow2Header> read_qcow2_header(const std::filesystem::path& file);

// Writes a new, empty qcow2 v3 overlay of `virtual_size` bytes (a whole number of 512-byte
// sectors) whose backing file is `backing` (recorded as given: pass an absolute path) in
// format `backing_format`. Never overwrites: an existing `overlay` is an error. The file is
// complete and synced when this returns; on failure nothing is left.
void write_qcow2_overlay(const std::filesystem::path& overlay, const std::filesystem::path& backing,
                         const std::string& backing_format, std::uint64_t virtual_size);

// Points an existing qcow2 image at another backing file of the same contents (an "unsafe
// rebase", as `qemu-img rebase -u` does, done in-process: image/qcow2_rebase.cpp): the name is
// written where the old one was, in the header's cluster. Throws DiskError when the image has
// no backing file or the new name does not fit in that cluster's free room.
void set_backing_file(const std::filesystem::path& image, const std::string& backing);

}  // namespace bowline::image
