// ISO 9660 + Joliet writer for cloud-init NoCloud seeds.
//
// The format, as far as this writer uses it
// -----------------------------------------
// An ISO 9660 image is a sequence of 2048-byte sectors. Numbers are stored little-endian,
// big-endian, or "both-endian" (the little-endian copy immediately followed by the big-endian
// one) depending on the field; text fields are padded with spaces. We lay the image out as:
//
//   sectors 0-15   system area; all zero (we are not bootable).
//   sector 16      primary volume descriptor (type 1): volume id, total size in sectors (the
//                  "volume space size"), where the path tables are, and a copy of the root
//                  directory's record. The tree it describes may only use upper-case
//                  d-characters (A-Z 0-9 _), so "user-data" appears there as "USER_DATA.;1"
//                  (name, '.', extension, ';', version; level-2 length of up to 30 characters).
//   sector 17      Joliet supplementary volume descriptor (type 2): the same fields, but text is
//                  UCS-2 big-endian and the escape sequence "%/E" (UCS-2 level 3) marks it as
//                  Joliet. It has its own root directory whose records carry the real names.
//   sector 18      volume descriptor set terminator (type 255).
//   sectors 19-22  path tables: a flat list of all directories (here just the root), once with
//                  little-endian numbers ("L") and once big-endian ("M"), for each descriptor.
//   then           the primary root directory, then the Joliet root directory, each a whole
//                  number of sectors, starting with the "." and ".." records (for the root both
//                  point at the root itself); a record never crosses a sector boundary. Then the
//                  file contents, each starting on a fresh sector. Both trees point at the same
//                  file extents, so contents are stored once.
//
// Why Joliet: the primary tree cannot hold "user-data" or "network-config" as such. When a
// Joliet descriptor is present, Linux's isofs mounts the Joliet tree, which carries the names
// case-preserved with '-' intact, so cloud-init finds its files. We write no Rock Ridge: a seed
// needs no POSIX owners, modes or symlinks.
//
// Reproducibility: every timestamp in the image is fixed at 2000-01-01 00:00:00 UTC, and files
// are placed in name order, so the same input always gives byte-identical output (and the seed
// of a VM does not change between starts unless its content does).

#include "guest/iso9660_writer.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <utility>

namespace bowline::guest {
namespace {

constexpr std::size_t kSectorSize = 2048;
constexpr std::size_t kPrimaryDescriptorSector = 16;
constexpr std::size_t kJolietDescriptorSector = 17;
constexpr std::size_t kTerminatorSector = 18;
constexpr std::size_t kPrimaryPathTableL = 19;
constexpr std::size_t kPrimaryPathTableM = 20;
constexpr std::size_t kJolietPathTableL = 21;
constexpr std::size_t kJolietPathTableM = 22;
constexpr std::size_t kFirstDirectorySector = 23;

// The root directory's path table record: 8 fixed bytes, a 1-byte identifier, 1 pad byte.
constexpr std::size_t kPathTableSize = 10;
// Level 2: file name plus extension, without the '.' and ";1".
constexpr std::size_t kMaxPrimaryNameLength = 30;
// Extensions are cut to this when a name has to be shortened or made unique.
constexpr std::size_t kMaxShortenedExtension = 8;

// --- Field writers (offsets are absolute within `out`) ---------------------------------------

void put_u8(std::string& out, std::size_t at, std::uint32_t value) {
  out[at] = static_cast<char>(value & 0xffu);
}

void put_le16(std::string& out, std::size_t at, std::uint32_t value) {
  put_u8(out, at, value);
  put_u8(out, at + 1, value >> 8);
}

void put_be16(std::string& out, std::size_t at, std::uint32_t value) {
  put_u8(out, at, value >> 8);
  put_u8(out, at + 1, value);
}

void put_le32(std::string& out, std::size_t at, std::uint32_t value) {
  put_le16(out, at, value);
  put_le16(out, at + 2, value >> 16);
}

void put_be32(std::string& out, std::size_t at, std::uint32_t value) {
  put_be16(out, at, value >> 16);
  put_be16(out, at + 2, value);
}

void put_both16(std::string& out, std::size_t at, std::uint32_t value) {
  put_le16(out, at, value);
  put_be16(out, at + 2, value);
}

void put_both32(std::string& out, std::size_t at, std::uint32_t value) {
  put_le32(out, at, value);
  put_be32(out, at + 4, value);
}

void put_bytes(std::string& out, std::size_t at, std::string_view bytes) {
  std::copy(bytes.begin(), bytes.end(), out.begin() + static_cast<std::ptrdiff_t>(at));
}

// ASCII to UCS-2 big-endian (all our names and ids are ASCII).
std::string ucs2(std::string_view ascii) {
  std::string out;
  out.reserve(ascii.size() * 2);
  for (char c : ascii) {
    out.push_back('\0');
    out.push_back(c);
  }
  return out;
}

// A space-padded text field of `width` bytes; UCS-2 spaces in the Joliet descriptor (an odd
// width leaves a final zero byte).
void put_text(std::string& out, std::size_t at, std::size_t width, std::string_view text,
              bool joliet) {
  std::string field = joliet ? ucs2(text) : std::string(text);
  while (field.size() + (joliet ? 2 : 1) <= width) field += joliet ? std::string("\0 ", 2) : " ";
  field.resize(width, '\0');
  put_bytes(out, at, field);
}

std::uint32_t u32(std::size_t value) {
  return static_cast<std::uint32_t>(value);
}

constexpr std::size_t kMinimumSectors = 150;

std::size_t sectors_for(std::size_t bytes) {
  return (bytes + kSectorSize - 1) / kSectorSize;
}

// --- Fixed time ----------------------------------------------------------------------------

// All timestamps: 2000-01-01 00:00:00 UTC, so that output is reproducible.
// Volume descriptor form: 16 ASCII digits YYYYMMDDHHMMSScc, then the offset from UTC in
// 15-minute units.
constexpr std::string_view kDescriptorTime{"2000010100000000\0", 17};
// "Not specified" in volume descriptor form.
constexpr std::string_view kDescriptorTimeUnset{"0000000000000000\0", 17};

// Directory record form: years since 1900, month, day, hour, minute, second, UTC offset.
void put_record_time(std::string& out, std::size_t at) {
  constexpr std::uint32_t kFields[] = {100, 1, 1, 0, 0, 0, 0};
  for (std::size_t i = 0; i < 7; ++i) put_u8(out, at + i, kFields[i]);
}

// --- Directory records ---------------------------------------------------------------------

constexpr std::uint32_t kFlagDirectory = 0x02;

std::size_t record_length(std::string_view identifier) {
  // 33 fixed bytes, the identifier, and a pad byte if needed to make the length even.
  return 33 + identifier.size() + (identifier.size() % 2 == 0 ? 1 : 0);
}

std::string directory_record(std::size_t extent, std::size_t size, std::uint32_t flags,
                             std::string_view identifier) {
  std::string record(record_length(identifier), '\0');
  put_u8(record, 0, u32(record.size()));
  put_u8(record, 1, 0);  // extended attribute record length
  put_both32(record, 2, u32(extent));
  put_both32(record, 10, u32(size));
  put_record_time(record, 18);
  put_u8(record, 25, flags);
  put_u8(record, 26, 0);      // file unit size (not interleaved)
  put_u8(record, 27, 0);      // interleave gap
  put_both16(record, 28, 1);  // volume sequence number
  put_u8(record, 32, u32(identifier.size()));
  put_bytes(record, 33, identifier);
  return record;
}

// Identifiers of the "." and ".." records.
constexpr std::string_view kSelfId{"\0", 1};
constexpr std::string_view kParentId{"\1", 1};

// Byte offsets of records within a directory such that none crosses a sector boundary, and
// the directory's size (a whole number of sectors).
struct DirectoryLayout {
  std::vector<std::size_t> offsets;
  std::size_t size = 0;
};

DirectoryLayout lay_out_directory(const std::vector<std::size_t>& record_lengths) {
  DirectoryLayout layout;
  std::size_t at = 0;
  for (std::size_t length : record_lengths) {
    if (at % kSectorSize + length > kSectorSize) at = sectors_for(at) * kSectorSize;
    layout.offsets.push_back(at);
    at += length;
  }
  layout.size = sectors_for(at) * kSectorSize;
  return layout;
}

// --- Names ---------------------------------------------------------------------------------

bool is_portable_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

// For error messages: the name with non-printable bytes escaped.
std::string quoted(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f && c != '"' && c != '\\') {
      out += c;
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    }
  }
  return out + "\"";
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void check_volume_id(std::string_view volume_id) {
  if (volume_id.empty() || volume_id.size() > kIsoMaxVolumeIdLength ||
      !std::all_of(volume_id.begin(), volume_id.end(), is_portable_char))
    throw std::invalid_argument("invalid ISO 9660 volume id " + quoted(volume_id) + ": must be 1-" +
                                std::to_string(kIsoMaxVolumeIdLength) +
                                " characters of [A-Za-z0-9._-]");
}

void check_file(const IsoFile& file) {
  const std::string& name = file.name;
  const std::string prefix = "invalid ISO 9660 file name " + quoted(name) + ": ";
  if (name.empty() || name.size() > kIsoMaxNameLength)
    throw std::invalid_argument(prefix + "must be 1-" + std::to_string(kIsoMaxNameLength) +
                                " characters long");
  if (!std::all_of(name.begin(), name.end(), is_portable_char))
    throw std::invalid_argument(prefix + "only [A-Za-z0-9._-] are allowed (flat directory)");
  if (name == "." || name == "..") throw std::invalid_argument(prefix + "reserved name");
  if (name.back() == '.')
    throw std::invalid_argument(prefix + "must not end with '.' (Linux drops it)");
  if (file.content.size() > kIsoMaxFileSize)
    throw std::invalid_argument("ISO 9660 file " + quoted(name) +
                                " is too large: " + std::to_string(file.content.size()) +
                                " bytes (at most " + std::to_string(kIsoMaxFileSize) + ")");
}

// A name split at its last '.' into (name, extension); ISO 9660 orders directory records by
// name first, then extension.
std::pair<std::string_view, std::string_view> split_extension(std::string_view name) {
  const auto dot = name.rfind('.');
  if (dot == std::string_view::npos) return {name, {}};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

// Directory record order: by name, then extension (the version, always 1 here, is ignored).
// All our characters sort above the space that ISO 9660 pads with, so plain lexicographic
// comparison of each part matches the standard's padded comparison.
bool identifier_less(std::string_view a, std::string_view b) {
  const auto unversioned = [](std::string_view id) {
    return id.ends_with(";1") ? id.substr(0, id.size() - 2) : id;
  };
  return split_extension(unversioned(a)) < split_extension(unversioned(b));
}

// The primary-tree identifier "NAME.EXT;1" for `name`, unique among `taken`: upper case,
// characters outside the d-characters become '_', at most 30 characters besides '.' and ";1".
// Names that collide after this mapping get a numeric suffix ("USER_DATA_1.").
std::string primary_identifier(std::string_view name, std::set<std::string>& taken) {
  std::string mapped;
  for (char c : name)
    mapped += (c == '-' || c == '.')
                  ? '_'
                  : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const auto dot = name.rfind('.');
  std::string base = dot == std::string_view::npos ? mapped : mapped.substr(0, dot);
  std::string extension = dot == std::string_view::npos ? "" : mapped.substr(dot + 1);
  if (base.size() + extension.size() > kMaxPrimaryNameLength) {
    // Only ever shortened: resizing a short base up to the room left padded it with NULs.
    extension.resize(std::min(extension.size(), kMaxShortenedExtension));
    base.resize(std::min(base.size(), kMaxPrimaryNameLength - extension.size()));
  }
  std::string identifier = base + "." + extension + ";1";
  for (std::size_t n = 1; taken.count(identifier) != 0; ++n) {
    const std::string suffix = "_" + std::to_string(n);
    const std::string short_extension =
        extension.substr(0, std::min(extension.size(), kMaxShortenedExtension));
    const std::size_t room = kMaxPrimaryNameLength - short_extension.size() - suffix.size();
    identifier =
        base.substr(0, std::min(base.size(), room)) + suffix + "." + short_extension + ";1";
  }
  taken.insert(identifier);
  return identifier;
}

// --- Image assembly ------------------------------------------------------------------------

struct Entry {
  const IsoFile* file;
  std::string primary_id;  // "USER_DATA.;1"
  std::string joliet_id;   // UCS-2 big-endian "user-data" (no ";1", as genisoimage writes it)
  std::size_t extent = 0;
};

struct Tree {
  std::size_t extent = 0;  // first sector of the root directory
  std::size_t size = 0;    // bytes, a multiple of the sector size
  std::string directory;   // the directory's bytes
};

Tree build_root(const std::vector<Entry>& entries, bool joliet, std::size_t extent) {
  std::vector<const Entry*> order;
  for (const auto& entry : entries) order.push_back(&entry);
  std::sort(order.begin(), order.end(), [joliet](const Entry* a, const Entry* b) {
    return joliet ? identifier_less(a->file->name, b->file->name)
                  : identifier_less(a->primary_id, b->primary_id);
  });

  std::vector<std::size_t> lengths = {record_length(kSelfId), record_length(kParentId)};
  for (const Entry* entry : order)
    lengths.push_back(record_length(joliet ? entry->joliet_id : entry->primary_id));
  const DirectoryLayout layout = lay_out_directory(lengths);

  Tree tree;
  tree.extent = extent;
  tree.size = layout.size;
  tree.directory.assign(layout.size, '\0');
  put_bytes(tree.directory, layout.offsets[0],
            directory_record(extent, layout.size, kFlagDirectory, kSelfId));
  put_bytes(tree.directory, layout.offsets[1],
            directory_record(extent, layout.size, kFlagDirectory, kParentId));
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Entry& entry = *order[i];
    put_bytes(tree.directory, layout.offsets[i + 2],
              directory_record(entry.extent, entry.file->content.size(), 0,
                               joliet ? entry.joliet_id : entry.primary_id));
  }
  return tree;
}

void put_path_tables(std::string& image, std::size_t l_sector, std::size_t m_sector,
                     std::size_t root_extent) {
  // One record: identifier length 1, no extended attributes, extent, parent directory number
  // (the root is its own parent, number 1), identifier 0x00, pad byte.
  const std::size_t l = l_sector * kSectorSize;
  put_u8(image, l, 1);
  put_le32(image, l + 2, u32(root_extent));
  put_le16(image, l + 6, 1);
  const std::size_t m = m_sector * kSectorSize;
  put_u8(image, m, 1);
  put_be32(image, m + 2, u32(root_extent));
  put_be16(image, m + 6, 1);
}

void put_volume_descriptor(std::string& image, std::size_t sector, bool joliet,
                           std::string_view volume_id, std::size_t total_sectors,
                           std::size_t l_table, std::size_t m_table, const Tree& root) {
  const std::size_t d = sector * kSectorSize;
  put_u8(image, d + 0, joliet ? 2 : 1);  // primary / supplementary
  put_bytes(image, d + 1, "CD001");
  put_u8(image, d + 6, 1);                 // descriptor version
  put_text(image, d + 8, 32, "", joliet);  // system identifier
  // Volume id as given: lower-case "cidata" is outside the d-characters, but it is what every
  // NoCloud seed carries (genisoimage -V cidata does the same) and what blkid reports.
  put_text(image, d + 40, 32, volume_id, joliet);  // volume identifier
  put_both32(image, d + 80, u32(total_sectors));   // volume space size
  if (joliet) put_bytes(image, d + 88, "%/E");     // UCS-2 level 3
  put_both16(image, d + 120, 1);                   // volume set size
  put_both16(image, d + 124, 1);                   // volume sequence number
  put_both16(image, d + 128, kSectorSize);         // logical block size
  put_both32(image, d + 132, kPathTableSize);
  put_le32(image, d + 140, u32(l_table));
  put_be32(image, d + 148, u32(m_table));
  put_bytes(image, d + 156, directory_record(root.extent, root.size, kFlagDirectory, kSelfId));
  put_text(image, d + 190, 128, "", joliet);         // volume set identifier
  put_text(image, d + 318, 128, "", joliet);         // publisher
  put_text(image, d + 446, 128, "", joliet);         // data preparer
  put_text(image, d + 574, 128, "BOWLINE", joliet);  // application
  put_text(image, d + 702, 37, "", joliet);          // copyright file
  put_text(image, d + 739, 37, "", joliet);          // abstract file
  put_text(image, d + 776, 37, "", joliet);          // bibliographic file
  put_bytes(image, d + 813, kDescriptorTime);        // creation
  put_bytes(image, d + 830, kDescriptorTime);        // modification
  put_bytes(image, d + 847, kDescriptorTimeUnset);   // expiration
  put_bytes(image, d + 864, kDescriptorTimeUnset);   // effective
  put_u8(image, d + 881, 1);                         // file structure version
}

}  // namespace

std::string write_iso9660(std::string_view volume_id, const std::vector<IsoFile>& files) {
  check_volume_id(volume_id);
  for (const auto& file : files) check_file(file);

  // Name order makes the output independent of the order of `files`.
  std::vector<const IsoFile*> sorted;
  for (const auto& file : files) sorted.push_back(&file);
  std::sort(sorted.begin(), sorted.end(),
            [](const IsoFile* a, const IsoFile* b) { return a->name < b->name; });
  std::set<std::string> folded;
  for (const IsoFile* file : sorted) {
    if (!folded.insert(lowercase(file->name)).second) {
      const auto same = std::find_if(sorted.begin(), sorted.end(), [&](const IsoFile* other) {
        return other != file && lowercase(other->name) == lowercase(file->name);
      });
      throw std::invalid_argument((*same)->name == file->name
                                      ? "duplicate ISO 9660 file name " + quoted(file->name)
                                      : "ISO 9660 file names " + quoted((*same)->name) + " and " +
                                            quoted(file->name) + " differ only in letter case");
    }
  }

  std::vector<Entry> entries;
  std::set<std::string> taken;
  for (const IsoFile* file : sorted)
    entries.push_back({file, primary_identifier(file->name, taken), ucs2(file->name)});

  // Directory sizes do not depend on where the files go, so lay out the directories first with
  // placeholder extents, then place the files after them and build the directories for real.
  const std::size_t primary_dir_sectors = build_root(entries, false, 0).size / kSectorSize;
  const std::size_t joliet_dir_sectors = build_root(entries, true, 0).size / kSectorSize;
  const std::size_t primary_root = kFirstDirectorySector;
  const std::size_t joliet_root = primary_root + primary_dir_sectors;
  const std::size_t data_start = joliet_root + joliet_dir_sectors;

  std::size_t next = data_start;
  bool any_empty = false;
  for (auto& entry : entries) {
    const std::size_t size = entry.file->content.size();
    if (size == 0) {
      any_empty = true;
      continue;
    }
    entry.extent = next;
    next += sectors_for(size);
  }
  // Empty files point at the start of the data area (as genisoimage does), which must exist.
  if (any_empty && next == data_start) ++next;
  for (auto& entry : entries)
    if (entry.file->content.empty()) entry.extent = data_start;
  // Pad small images to 150 sectors (300 KiB), as mkisofs does: probes such as busybox's
  // findfs/blkid read the first 68 KiB in one go and find nothing when the file is shorter.
  const std::size_t total_sectors = std::max<std::size_t>(next, kMinimumSectors);

  const Tree primary = build_root(entries, false, primary_root);
  const Tree joliet = build_root(entries, true, joliet_root);

  std::string image(total_sectors * kSectorSize, '\0');
  put_volume_descriptor(image, kPrimaryDescriptorSector, false, volume_id, total_sectors,
                        kPrimaryPathTableL, kPrimaryPathTableM, primary);
  put_volume_descriptor(image, kJolietDescriptorSector, true, volume_id, total_sectors,
                        kJolietPathTableL, kJolietPathTableM, joliet);
  const std::size_t t = kTerminatorSector * kSectorSize;
  put_u8(image, t, 255);
  put_bytes(image, t + 1, "CD001");
  put_u8(image, t + 6, 1);
  put_path_tables(image, kPrimaryPathTableL, kPrimaryPathTableM, primary.extent);
  put_path_tables(image, kJolietPathTableL, kJolietPathTableM, joliet.extent);
  put_bytes(image, primary.extent * kSectorSize, primary.directory);
  put_bytes(image, joliet.extent * kSectorSize, joliet.directory);
  for (const auto& entry : entries)
    put_bytes(image, entry.extent * kSectorSize, entry.file->content);
  return image;
}

}  // namespace bowline::guest
