#include "engine/space_archive.hpp"

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "engine/quota.hpp"

namespace bowline::engine::archive {

namespace {

constexpr std::uint64_t kBlock = 512;
constexpr std::uint64_t kSmallLimit = 1024 * 1024;
constexpr std::uint64_t kOctalMax = 077777777777ULL;  // 11 octal digits: 8 GiB - 1

void put_octal(std::string& block, std::size_t at, std::size_t width, std::uint64_t value) {
  // width - 1 digits and a NUL, as ustar writes them
  std::string digits(width - 1, '0');
  for (std::size_t i = width - 1; i-- > 0; value >>= 3)
    digits[i] = static_cast<char>('0' + (value & 7));
  std::memcpy(block.data() + at, digits.data(), digits.size());
}

void put_size(std::string& block, std::uint64_t size) {
  if (size <= kOctalMax) return put_octal(block, 124, 12, size);
  // GNU base-256: the top bit of the first byte set, the number big-endian in the rest.
  block[124] = static_cast<char>(0x80);
  for (int i = 11; i >= 1; --i, size >>= 8) block[124 + i] = static_cast<char>(size & 0xff);
}

}  // namespace

std::uint64_t tar_number(std::string_view field) {
  if (!field.empty() && (static_cast<unsigned char>(field[0]) & 0x80)) {
    std::uint64_t v = 0;
    for (std::size_t i = 1; i < field.size(); ++i)
      v = (v << 8) | static_cast<unsigned char>(field[i]);
    return v;
  }
  std::uint64_t v = 0;
  for (char c : field) {
    if (c == '\0' || c == ' ') break;
    if (c < '0' || c > '7') throw ArchiveError("the archive has a tar header with a bad number");
    v = (v << 3) | static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

namespace {

std::uint64_t padded(std::uint64_t size) {
  return (size + kBlock - 1) / kBlock * kBlock;
}

bool known_member(const std::string& name) {
  return name == kSpaceMember || name == kTemplateMember || name == kDiskMember ||
         name == kManifestMember;
}

}  // namespace

std::string tar_header(const std::string& name, std::uint64_t size, std::int64_t mtime) {
  if (name.size() >= 100) throw ArchiveError("member name too long: " + name);
  std::string block(kBlock, '\0');
  std::memcpy(block.data(), name.data(), name.size());
  put_octal(block, 100, 8, 0600);
  put_octal(block, 108, 8, 0);
  put_octal(block, 116, 8, 0);
  put_size(block, size);
  put_octal(block, 136, 12, static_cast<std::uint64_t>(std::max<std::int64_t>(0, mtime)));
  block[156] = '0';
  std::memcpy(block.data() + 257,
              "ustar\0"
              "00",
              8);
  std::memcpy(block.data() + 265, "bowline", 7);
  std::memcpy(block.data() + 297, "bowline", 7);
  std::memset(block.data() + 148, ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : block) sum += c;
  put_octal(block, 148, 7, sum);  // six digits, NUL, and the space already there
  return block;
}

std::string tar_padding(std::uint64_t size) {
  return std::string(padded(size) - size, '\0');
}

std::string manifest_text(const std::vector<Member>& members) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& m : members)
    list.push_back({{"name", m.name},
                    {"size", m.size},
                    {"sha256", m.sha256.empty() ? std::string(64, '0') : m.sha256}});
  nlohmann::ordered_json manifest = {{"format", kFormat}, {"version", 1}, {"members", list}};
  return manifest.dump(2) + "\n";
}

std::uint64_t archive_size(const std::vector<Member>& members) {
  std::uint64_t total = 0;
  for (const auto& m : members) total += kBlock + padded(m.size);
  const auto manifest = manifest_text(members).size();
  return total + kBlock + padded(manifest) + 2 * kBlock;
}

// ---- writing ----------------------------------------------------------------------------------

void ArchiveWriter::add(const std::string& name, std::string_view data) {
  begin(name, data.size());
  write(data);
  end();
}

void ArchiveWriter::begin(const std::string& name, std::uint64_t size) {
  if (open_) throw ArchiveError("a member is still open");
  sink_(tar_header(name, size, mtime_));
  members_.push_back({name, size, ""});
  hash_.reset();
  written_ = 0;
  open_ = true;
}

void ArchiveWriter::write(std::string_view data) {
  if (!open_ || written_ + data.size() > members_.back().size)
    throw ArchiveError("more bytes than the member's size");
  hash_.update(data.data(), data.size());
  written_ += data.size();
  sink_(data);
}

void ArchiveWriter::write_hashed(std::string_view data) {
  if (!open_ || written_ + data.size() > members_.back().size)
    throw ArchiveError("more bytes than the member's size");
  written_ += data.size();
  sink_(data);
}

void ArchiveWriter::end() {
  if (!open_ || written_ != members_.back().size)
    throw ArchiveError("the member " + members_.back().name + " ended early");
  members_.back().sha256 = hash_.hex();
  sink_(tar_padding(written_));
  open_ = false;
}

void ArchiveWriter::finish() {
  const auto manifest = manifest_text(members_);
  sink_(tar_header(kManifestMember, manifest.size(), mtime_));
  sink_(manifest);
  sink_(tar_padding(manifest.size()));
  sink_(std::string(2 * kBlock, '\0'));
}

// ---- reading ----------------------------------------------------------------------------------

void ArchiveReader::feed(std::string_view bytes) {
  total_ += bytes.size();
  while (!bytes.empty()) {
    if (ended_) {
      // Only zeros may follow the end (tar pads to its record size).
      if (bytes.find_first_not_of('\0') != std::string_view::npos)
        throw ArchiveError("the archive has data after its end");
      return;
    }
    if (current_ && remaining_ > 0) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, bytes.size()));
      take_data(bytes.substr(0, n));
      bytes.remove_prefix(n);
      remaining_ -= n;
      if (remaining_ == 0 && padding_ == 0) end_member();
      continue;
    }
    if (current_ && padding_ > 0) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(padding_, bytes.size()));
      bytes.remove_prefix(n);
      padding_ -= n;
      if (padding_ == 0) end_member();
      continue;
    }
    const auto n = std::min(kBlock - header_.size(), bytes.size());
    header_.append(bytes.substr(0, n));
    bytes.remove_prefix(n);
    if (header_.size() == kBlock) take_header();
  }
}

void ArchiveReader::take_header() {
  std::string block;
  block.swap(header_);
  if (block.find_first_not_of('\0') == std::string::npos) {
    if (++zero_blocks_ == 2) ended_ = true;
    return;
  }
  if (zero_blocks_) throw ArchiveError("the archive has a member after an end block");
  unsigned sum = 0;
  for (std::size_t i = 0; i < kBlock; ++i)
    sum += (i >= 148 && i < 156) ? ' ' : static_cast<unsigned char>(block[i]);
  if (tar_number(std::string_view(block).substr(148, 8)) != sum)
    throw ArchiveError("the archive is damaged: a tar header's checksum does not match");
  const std::string name(block.data(), strnlen(block.data(), 100));
  const char type = block[156];
  if (type != '0' && type != '\0')
    throw ArchiveError("the archive's member " + name + " is not a regular file");
  if (!known_member(name))
    throw ArchiveError("the archive has a member " + name + " that a space archive does not");
  for (const auto& m : members_)
    if (m.name == name) throw ArchiveError("the archive has the member " + name + " twice");
  if (!manifest_.empty() || (!members_.empty() && members_.back().name == kManifestMember))
    throw ArchiveError("the archive has a member after its manifest");
  const auto size = tar_number(std::string_view(block).substr(124, 12));
  keep_ = nullptr;
  if (name == kSpaceMember) keep_ = &space_json_;
  if (name == kTemplateMember) keep_ = &template_yaml_;
  if (name == kManifestMember) keep_ = &manifest_;
  if (keep_ && size > kSmallLimit)
    throw ArchiveError("the archive's " + name + " is larger than 1 MiB");
  if (name == kDiskMember && size > max_disk_)
    throw ArchiveError("the archive's disk.qcow2 holds " + format_quota_bytes(size) +
                       ", more than the " + format_quota_bytes(max_disk_) +
                       " this import may take (the owner's disk quota left, or the server's "
                       "server.kvm.max_image_size)");
  current_ = Member{name, size, ""};
  hash_.reset();
  remaining_ = size;
  padding_ = padded(size) - size;
  if (size == 0) end_member();
}

void ArchiveReader::take_data(std::string_view bytes) {
  if (current_->name != kManifestMember) hash_.update(bytes.data(), bytes.size());
  if (keep_)
    keep_->append(bytes);
  else
    disk_sink_(bytes);
}

void ArchiveReader::end_member() {
  current_->sha256 = current_->name == kManifestMember ? "" : hash_.hex();
  members_.push_back(*current_);
  current_.reset();
  keep_ = nullptr;
}

void ArchiveReader::finish() {
  if (current_ || !header_.empty())
    throw ArchiveError("the archive ends in the middle of a member (it was cut short)");
  if (members_.empty() || members_.back().name != kManifestMember)
    throw ArchiveError(
        "the archive has no manifest.json at its end (cut short, or not a "
        "bowline space archive)");
  const auto manifest = nlohmann::json::parse(manifest_, nullptr, false);
  if (!manifest.is_object() || manifest.value("format", "") != kFormat ||
      !manifest.contains("members") || !manifest["members"].is_array())
    throw ArchiveError("manifest.json is not a bowline space archive's manifest");
  if (manifest.value("version", 0) != 1)
    throw ArchiveError("manifest.json has version " +
                       manifest.value("version", nlohmann::json()).dump() +
                       "; this bowline reads version 1");
  const auto& listed = manifest["members"];
  if (listed.size() != members_.size() - 1)
    throw ArchiveError("manifest.json lists " + std::to_string(listed.size()) +
                       " members; the archive has " + std::to_string(members_.size() - 1));
  for (std::size_t i = 0; i < listed.size(); ++i) {
    const auto& want = listed[i];
    const auto& got = members_[i];
    if (!want.is_object() || want.value("name", "") != got.name)
      throw ArchiveError("manifest.json lists the members in another order than the archive's");
    if (want.value("size", std::uint64_t{0}) != got.size)
      throw ArchiveError("the archive's " + got.name + " has " + std::to_string(got.size) +
                         " bytes; manifest.json says " +
                         want.value("size", nlohmann::json()).dump());
    if (want.value("sha256", "") != got.sha256)
      throw ArchiveError("the archive's " + got.name +
                         " does not match its SHA-256 in manifest.json: the archive is damaged");
  }
  for (const char* needed : {kSpaceMember, kTemplateMember, kDiskMember})
    if (std::none_of(members_.begin(), members_.end(),
                     [&](const Member& m) { return m.name == needed; }))
      throw ArchiveError(std::string("the archive has no ") + needed);
}

}  // namespace bowline::engine::archive
