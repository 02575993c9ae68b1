// Who may enter which directory: a user's identity and groups, and the kernel's decision by mode
// bits and POSIX access ACL (the storage and kvm checks ask it for QEMU's user).
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>

#include "engine/node_check.hpp"

namespace bowline::engine {

namespace fs = std::filesystem;

std::optional<Identity> lookup_identity(const std::string& user) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwnam_r(user.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found)
    return std::nullopt;
  Identity id;
  id.name = user;
  id.uid = found->pw_uid;
  id.gid = found->pw_gid;
  int count = 64;
  std::vector<gid_t> groups(static_cast<std::size_t>(count));
  if (getgrouplist(user.c_str(), found->pw_gid, groups.data(), &count) < 0) {
    groups.resize(static_cast<std::size_t>(count));
    getgrouplist(user.c_str(), found->pw_gid, groups.data(), &count);
  }
  groups.resize(static_cast<std::size_t>(std::max(count, 0)));
  for (const auto g : groups) id.groups.push_back(g);
  if (std::find(id.groups.begin(), id.groups.end(), id.gid) == id.groups.end())
    id.groups.push_back(id.gid);
  return id;
}

namespace {

bool in_group(const Identity& who, unsigned gid) {
  return std::find(who.groups.begin(), who.groups.end(), gid) != who.groups.end();
}

// The POSIX access ACL of `path` (system.posix_acl_access, Linux's xattr layout: a version
// word, then {tag u16, perm u16, id u32} entries, little-endian). Empty: none.
struct AclEntry {
  std::uint16_t tag = 0;
  std::uint16_t perm = 0;
  std::uint32_t id = 0;
};
constexpr std::uint16_t kAclUserObj = 0x01, kAclUser = 0x02, kAclGroupObj = 0x04, kAclGroup = 0x08,
                        kAclMask = 0x10, kAclOther = 0x20;

std::vector<AclEntry> read_access_acl(const std::string& path) {
  std::vector<AclEntry> entries;
  unsigned char buffer[4096];
  const auto size = lgetxattr(path.c_str(), "system.posix_acl_access", buffer, sizeof buffer);
  if (size < 4) return entries;
  auto u16 = [&](std::size_t at) {
    return static_cast<std::uint16_t>(buffer[at] | (buffer[at + 1] << 8));
  };
  auto u32 = [&](std::size_t at) {
    return static_cast<std::uint32_t>(buffer[at]) |
           (static_cast<std::uint32_t>(buffer[at + 1]) << 8) |
           (static_cast<std::uint32_t>(buffer[at + 2]) << 16) |
           (static_cast<std::uint32_t>(buffer[at + 3]) << 24);
  };
  if (u32(0) != 2) return entries;  // POSIX_ACL_XATTR_VERSION
  for (std::size_t at = 4; at + 8 <= static_cast<std::size_t>(size); at += 8)
    entries.push_back({u16(at), u16(at + 2), u32(at + 4)});
  return entries;
}

// The kernel's order (fs/posix_acl.c posix_acl_permission): owner, named user, groups, other.
bool acl_allows(const std::vector<AclEntry>& acl, const struct stat& st, const Identity& who,
                unsigned mask) {
  std::uint16_t acl_mask = 07;
  for (const auto& e : acl)
    if (e.tag == kAclMask) acl_mask = e.perm;
  if (who.uid == st.st_uid) {
    for (const auto& e : acl)
      if (e.tag == kAclUserObj) return (e.perm & mask) == mask;
  }
  for (const auto& e : acl)
    if (e.tag == kAclUser && e.id == who.uid) return (e.perm & acl_mask & mask) == mask;
  bool group_matched = false;
  for (const auto& e : acl) {
    const bool matches = (e.tag == kAclGroupObj && in_group(who, st.st_gid)) ||
                         (e.tag == kAclGroup && in_group(who, e.id));
    if (!matches) continue;
    group_matched = true;
    if ((e.perm & acl_mask & mask) == mask) return true;
  }
  if (group_matched) return false;
  for (const auto& e : acl)
    if (e.tag == kAclOther) return (e.perm & mask) == mask;
  return false;
}

}  // namespace

std::optional<bool> may_access(const std::string& path, const Identity& who, unsigned mask) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  if (who.uid == 0) {
    // root passes read/write always, execute when anyone may execute (or a directory).
    if (!(mask & 1)) return true;
    return S_ISDIR(st.st_mode) || (st.st_mode & 0111) != 0;
  }
  const auto acl = read_access_acl(path);
  if (!acl.empty()) return acl_allows(acl, st, who, mask);
  unsigned bits = 0;
  if (who.uid == st.st_uid)
    bits = (st.st_mode >> 6) & 07;
  else if (in_group(who, st.st_gid))
    bits = (st.st_mode >> 3) & 07;
  else
    bits = st.st_mode & 07;
  return (bits & mask) == mask;
}

std::vector<std::string> untraversable_components(const std::string& path, const Identity& who) {
  std::vector<std::string> blocked;
  auto walk = [&](const fs::path& full) {
    fs::path current;
    for (const auto& part : full) {
      current /= part;
      const auto ok = may_access(current.string(), who, 1);
      if (!ok) break;  // does not exist (yet): nothing further to walk
      const auto text = current.string();
      if (!*ok && std::find(blocked.begin(), blocked.end(), text) == blocked.end())
        blocked.push_back(text);
    }
  };
  std::error_code ec;
  const auto absolute = fs::absolute(fs::path(path), ec).lexically_normal();
  walk(absolute);  // the path as written (a symlinked parent must be entered too)
  const auto real = fs::weakly_canonical(absolute, ec);
  if (!ec && real != absolute) walk(real);  // and where the symlinks lead
  return blocked;
}

}  // namespace bowline::engine
