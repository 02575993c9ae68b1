// The ISO 9660 writer's fuzzing entry point (guest/iso9660_writer.hpp), shared by the libFuzzer
// target (iso9660_fuzz.cpp) and the corpus replay test (tests/unit/guest/
// iso9660_fuzz_replay_test.cpp).
//
// The input is cut into a volume id and files (see files_from). The writer must accept exactly
// what its header promises to accept, and what it writes must read back: both volume
// descriptors give the image's true size, every record lies inside its directory's sectors,
// the Joliet tree names exactly the files given, the primary tree holds one d-character name
// per file, and each name's extent holds that file's bytes. The same files in another order
// give the same bytes.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "guest/iso9660_writer.hpp"

namespace bowline::guest::fuzz {

inline void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "ISO 9660 invariant broken: %s\n", what);
    std::abort();
  }
}

// Byte 0: the volume id's length (0: "cidata"), then the id; then per file: a name length
// byte, the name, a content length byte (times 37, so files reach a few sectors), the content
// (repeated from what is left when the input runs short, so long files stay cheap to make).
struct Input {
  std::string volume_id = "cidata";
  std::vector<IsoFile> files;
};

inline Input files_from(const std::uint8_t* data, std::size_t size) {
  Input in;
  std::size_t at = 0;
  auto take = [&](std::size_t n) {
    n = std::min(n, size - at);
    std::string out(reinterpret_cast<const char*>(data + at), n);
    at += n;
    return out;
  };
  if (size == 0) return in;
  if (const std::size_t id = data[at++] % 24; id != 0) in.volume_id = take(id);
  while (at < size && in.files.size() < 12) {
    IsoFile file;
    file.name = take(data[at++] % 72);
    const std::size_t length = at < size ? data[at++] * 37u : 0;
    const std::string seed = take(std::min<std::size_t>(length, 64));
    while (!seed.empty() && file.content.size() < length) file.content += seed;
    file.content.resize(seed.empty() ? 0 : length);
    in.files.push_back(std::move(file));
  }
  return in;
}

inline bool portable(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

// What iso9660_writer.hpp says it accepts, written out independently.
inline bool acceptable(const Input& in) {
  if (in.volume_id.empty() || in.volume_id.size() > kIsoMaxVolumeIdLength ||
      !portable(in.volume_id))
    return false;
  std::set<std::string> folded;
  for (const auto& f : in.files) {
    if (f.name.empty() || f.name.size() > kIsoMaxNameLength || !portable(f.name) || f.name == "." ||
        f.name == ".." || f.name.back() == '.' || f.content.size() > kIsoMaxFileSize)
      return false;
    std::string lower = f.name;
    for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!folded.insert(lower).second) return false;
  }
  return true;
}

inline std::uint32_t le32(const std::string& b, std::size_t at) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(b[at])) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 1])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 2])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 3])) << 24;
}

inline std::uint32_t be32(const std::string& b, std::size_t at) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 3])) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 2])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 1])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at])) << 24;
}

// A both-endian 32-bit field whose two copies agree.
inline std::uint32_t both32(const std::string& b, std::size_t at) {
  check(at + 8 <= b.size(), "a field lies inside the image");
  check(le32(b, at) == be32(b, at + 4), "both-endian copies agree");
  return le32(b, at);
}

struct Record {
  std::string identifier;
  std::uint32_t extent = 0, size = 0;
  bool directory = false;
};

// The records of the directory at `extent` (`size` bytes), "." and ".." first.
inline std::vector<Record> read_directory(const std::string& image, std::uint32_t extent,
                                          std::uint32_t size) {
  constexpr std::size_t kSector = 2048;
  check(size % kSector == 0 && size > 0, "a directory is whole sectors");
  check(std::size_t{extent} * kSector + size <= image.size(), "a directory lies inside the image");
  std::vector<Record> out;
  for (std::size_t at = 0; at < size;) {
    const std::size_t base = std::size_t{extent} * kSector + at;
    const auto length = static_cast<unsigned char>(image[base]);
    if (length == 0) {  // the rest of this sector is padding
      check(std::all_of(image.begin() + static_cast<std::ptrdiff_t>(base),
                        image.begin() + static_cast<std::ptrdiff_t>(std::size_t{extent} * kSector +
                                                                    (at / kSector + 1) * kSector),
                        [](char c) { return c == '\0'; }),
            "a sector's tail after its last record is zero");
      at = (at / kSector + 1) * kSector;
      continue;
    }
    check(length >= 34 && at % kSector + length <= kSector, "a record stays in its sector");
    const auto id_length = static_cast<unsigned char>(image[base + 32]);
    check(33u + id_length <= length, "a record's identifier fits its record");
    check(length % 2 == 0, "a record's length is even");
    Record r;
    r.extent = both32(image, base + 2);
    r.size = both32(image, base + 10);
    r.directory = (static_cast<unsigned char>(image[base + 25]) & 0x02) != 0;
    r.identifier = image.substr(base + 33, id_length);
    out.push_back(std::move(r));
    at += length;
  }
  check(out.size() >= 2 && out[0].identifier == std::string(1, '\0') &&
            out[1].identifier == std::string(1, '\1'),
        "a directory starts with . and ..");
  return out;
}

inline bool d_characters(const std::string& id) {
  // NAME.EXT;1: upper-case letters, digits and '_' around exactly one '.'.
  if (id.size() < 3 || !id.ends_with(";1")) return false;
  const auto body = id.substr(0, id.size() - 2);
  if (std::count(body.begin(), body.end(), '.') != 1 || body.size() - 1 > 30) return false;
  return std::all_of(body.begin(), body.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
  });
}

inline std::string from_ucs2(const std::string& ucs2) {
  check(ucs2.size() % 2 == 0, "a Joliet name is whole UCS-2 characters");
  std::string out;
  for (std::size_t i = 0; i < ucs2.size(); i += 2) {
    check(ucs2[i] == '\0', "a Joliet name of ASCII has a zero high byte");
    out += ucs2[i + 1];
  }
  return out;
}

inline void check_descriptor(const std::string& image, std::size_t sector, int type) {
  const std::size_t d = sector * 2048;
  check(static_cast<unsigned char>(image[d]) == type && image.compare(d + 1, 5, "CD001") == 0,
        "a volume descriptor is where it belongs");
  if (type == 255) return;
  check(std::size_t{both32(image, d + 80)} * 2048 == image.size(),
        "the volume space size is the image's size");
}

// Both trees of the image, checked against the files.
inline void check_image(const std::string& image, const Input& in) {
  check(image.size() % 2048 == 0 && image.size() >= 150 * 2048, "whole sectors, 150 at least");
  check_descriptor(image, 16, 1);
  check_descriptor(image, 17, 2);
  check_descriptor(image, 18, 255);
  check(image.compare(17 * 2048 + 88, 3, "%/E") == 0, "Joliet's escape sequence");
  std::map<std::string, const IsoFile*> by_name;
  for (const auto& f : in.files) by_name[f.name] = &f;
  for (const bool joliet : {false, true}) {
    const std::size_t root = (joliet ? 17 : 16) * 2048 + 156;
    const auto records = read_directory(image, both32(image, root + 2), both32(image, root + 10));
    check(records.size() == in.files.size() + 2, "one record per file");
    std::set<std::string> seen;
    for (std::size_t i = 2; i < records.size(); ++i) {
      const auto& r = records[i];
      check(!r.directory, "the files are files");
      check(seen.insert(r.identifier).second, "identifiers are unique");
      if (!joliet) {
        check(d_characters(r.identifier), "a primary name is NAME.EXT;1 in d-characters");
        continue;
      }
      const auto name = from_ucs2(r.identifier);
      const auto it = by_name.find(name);
      check(it != by_name.end(), "a Joliet name is one of the files' names");
      check(r.size == it->second->content.size(), "a file's recorded size is its size");
      check(std::size_t{r.extent} * 2048 + r.size <= image.size(), "a file lies inside the image");
      check(image.compare(std::size_t{r.extent} * 2048, r.size, it->second->content) == 0,
            "a file's extent holds its bytes");
    }
  }
}

inline void run_one(const std::uint8_t* data, std::size_t size) {
  const Input in = files_from(data, size);
  const bool expected = acceptable(in);
  std::string image;
  try {
    image = write_iso9660(in.volume_id, in.files);
  } catch (const std::invalid_argument& e) {
    check(!expected, "the writer refuses only what its header says it refuses");
    check(std::string(e.what()).find("ISO 9660") != std::string::npos, "a refusal says what");
    return;
  }
  check(expected, "the writer accepts only what its header says it accepts");
  check_image(image, in);
  Input reversed = in;
  std::reverse(reversed.files.begin(), reversed.files.end());
  check(write_iso9660(reversed.volume_id, reversed.files) == image,
        "the order of the files does not change the image");
}

}  // namespace bowline::guest::fuzz
