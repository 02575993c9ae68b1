// The archive `bowline space export` writes and `space import` reads: a POSIX tar
// (ustar; sizes past 8 GiB in GNU's base-256, which GNU tar, bsdtar and Python read), because
// tar streams (each member's size is in its header, nothing is written at the end but the
// manifest) and anyone can look inside with `tar tvf` and check it with sha256sum. Members, in
// order:
//   space.json     the space's identity (id: instance-id and MACs; uuid; SSH host key pair),
//                  name, owner, template name and revision, what it was made of
//   template.yaml  the template's YAML at that revision
//   disk.qcow2     the boot disk flattened to a standalone qcow2 (image/qcow2_stream.hpp)
//   manifest.json  {"format": "bowline-space-archive", "version": 1, "members": [{name, size,
//                  sha256}]} for every member before it
// The manifest is last because the disk's digest is known only once it has been streamed. An
// import hashes each member as it arrives and trusts nothing until the manifest matches.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "image/sha256.hpp"

namespace bowline::engine::archive {

inline constexpr const char* kSpaceMember = "space.json";
inline constexpr const char* kTemplateMember = "template.yaml";
inline constexpr const char* kDiskMember = "disk.qcow2";
inline constexpr const char* kManifestMember = "manifest.json";
inline constexpr const char* kFormat = "bowline-space-archive";

class ArchiveError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Member {
  std::string name;
  std::uint64_t size = 0;
  std::string sha256;  // lowercase hex
};

// A ustar header block (512 bytes) for a regular file, mode 0600.
std::string tar_header(const std::string& name, std::uint64_t size, std::int64_t mtime);
// Zeros from `size` to the next 512-byte boundary.
std::string tar_padding(std::uint64_t size);
// A header's number field (octal, or GNU base-256 past 8 GiB); ArchiveError when it is neither.
std::uint64_t tar_number(std::string_view field);
// The manifest's text; its size depends only on the members' names and sizes.
std::string manifest_text(const std::vector<Member>& members);
// The archive's size for members of these names and sizes (digests not needed).
std::uint64_t archive_size(const std::vector<Member>& members);

// Writes an archive to `sink` as its members are produced, hashing each.
class ArchiveWriter {
 public:
  using Sink = std::function<void(std::string_view)>;
  ArchiveWriter(Sink sink, std::int64_t mtime) : sink_(std::move(sink)), mtime_(mtime) {}
  void add(const std::string& name, std::string_view data);
  void begin(const std::string& name, std::uint64_t size);
  void write(std::string_view data);  // exactly the size given to begin(), in pieces
  // For bytes already fed to hash() (by a reader thread, while they were in the CPU's cache):
  // counted and sunk, not hashed again. Nothing else may use hash() meanwhile.
  void write_hashed(std::string_view data);
  image::Sha256& hash() { return hash_; }
  void end();
  void finish();  // the manifest and the end-of-archive blocks
  const std::vector<Member>& members() const { return members_; }

 private:
  Sink sink_;
  std::int64_t mtime_;
  std::vector<Member> members_;
  image::Sha256 hash_;
  std::uint64_t written_ = 0;
  bool open_ = false;
};

// Reads an archive fed in pieces of any size. Small members (space.json, template.yaml, the
// manifest; at most 1 MiB each) are kept; the disk goes to `disk_sink` as it arrives. finish()
// checks that the manifest came last, lists exactly the members that came, in order, with
// their sizes and digests, and that the four members are there: ArchiveError naming what
// differs otherwise.
class ArchiveReader {
 public:
  using Sink = std::function<void(std::string_view)>;
  // `max_disk`: the most disk.qcow2 may hold, refused from its header, before a byte of it
  // is written (the importer's room: the owner's disk quota and the server's hard limit).
  explicit ArchiveReader(Sink disk_sink, std::uint64_t max_disk = UINT64_MAX)
      : disk_sink_(std::move(disk_sink)), max_disk_(max_disk) {}
  void feed(std::string_view bytes);
  void finish();
  std::uint64_t bytes_read() const { return total_; }
  const std::string& space_json() const { return space_json_; }
  const std::string& template_yaml() const { return template_yaml_; }
  const std::vector<Member>& members() const { return members_; }

 private:
  void take_header();
  void take_data(std::string_view bytes);
  void end_member();

  Sink disk_sink_;
  std::uint64_t max_disk_;
  std::string header_;  // the header block being gathered
  std::optional<Member> current_;
  std::uint64_t remaining_ = 0, padding_ = 0;
  std::string* keep_ = nullptr;  // where a small member's bytes go
  std::string space_json_, template_yaml_, manifest_;
  std::vector<Member> members_;
  image::Sha256 hash_;
  std::uint64_t total_ = 0;
  int zero_blocks_ = 0;
  bool ended_ = false;
};

}  // namespace bowline::engine::archive
