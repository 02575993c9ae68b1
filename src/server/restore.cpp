// restore_backup (backup.hpp): the archive is unpacked into a staging directory inside the data
// directory and checked there in full; only then do its files take their places, by rename.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "engine/space_archive.hpp"
#include "image/sha256.hpp"
#include "server/backup.hpp"
#include "server/data_dir_lock.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"

namespace bowline::server {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kBlock = 512;
constexpr std::uint64_t kSmallLimit = 1 << 20;
// What an archive may hold: names from this list only, never a path.
const std::set<std::string> kMembers = {"bowline.db",  "admin.token",     "tls-cert.pem",
                                        "tls-key.pem", "guest-guard.tag", "settings.txt",
                                        "config.yaml", "manifest.json"};
// Placed into the data directory; the rest (settings) go beside it for the operator to read.
const std::set<std::string> kPlaced = {"bowline.db", "admin.token", "tls-cert.pem", "tls-key.pem",
                                       "guest-guard.tag"};

struct Unpacked {
  std::vector<engine::archive::Member> members;  // before the manifest
  std::string manifest;
};

void write_all(int fd, const char* data, std::size_t size, const fs::path& path) {
  while (size > 0) {
    const auto n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw BackupError("cannot write " + path.string() + ": " + std::strerror(errno));
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

// One member's bytes into staging/NAME (0600, synced), hashed on the way.
engine::archive::Member unpack_member(std::istream& in, const std::string& name, std::uint64_t size,
                                      const fs::path& staging) {
  const auto path = staging / name;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw BackupError("cannot create " + path.string() + ": " + std::strerror(errno));
  image::Sha256 hash;
  std::string buffer(1 << 20, '\0');
  std::uint64_t left = size;
  try {
    while (left > 0) {
      const auto want = static_cast<std::streamsize>(std::min<std::uint64_t>(left, buffer.size()));
      if (!in.read(buffer.data(), want))
        throw BackupError("the archive ends inside its member " + name);
      hash.update(buffer.data(), static_cast<std::size_t>(want));
      write_all(fd, buffer.data(), static_cast<std::size_t>(want), path);
      left -= static_cast<std::uint64_t>(want);
    }
    if (::fsync(fd) != 0) throw BackupError("cannot sync " + path.string());
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  in.ignore(static_cast<std::streamsize>((kBlock - size % kBlock) % kBlock));
  return {name, size, hash.hex()};
}

Unpacked unpack(const fs::path& archive, const fs::path& staging) {
  std::ifstream in(archive, std::ios::binary);
  if (!in) throw BackupError("cannot read " + archive.string() + ": " + std::strerror(errno));
  Unpacked out;
  std::string block(kBlock, '\0');
  std::set<std::string> seen;
  while (in.read(block.data(), kBlock)) {
    if (block.find_first_not_of('\0') == std::string::npos) break;  // the end
    const std::string name(block.data(), ::strnlen(block.data(), 100));
    if (!kMembers.count(name) || !seen.insert(name).second)
      throw BackupError("not a bowline backup: it holds \"" + name.substr(0, 100) + "\"" +
                        (seen.count(name) ? " twice" : ", which a backup never does"));
    if (block[156] != '0' && block[156] != '\0')
      throw BackupError("not a bowline backup: its member " + name + " is not a plain file");
    const auto size = engine::archive::tar_number(std::string_view(block).substr(124, 12));
    if (name != "bowline.db" && size > kSmallLimit)
      throw BackupError("not a bowline backup: its member " + name + " is too large");
    if (!out.manifest.empty())
      throw BackupError("not a bowline backup: members after its manifest");
    auto member = unpack_member(in, name, size, staging);
    if (name == "manifest.json") {
      std::ifstream m(staging / name, std::ios::binary);
      out.manifest.assign(std::istreambuf_iterator<char>(m), std::istreambuf_iterator<char>());
      if (out.manifest.empty()) throw BackupError("not a bowline backup: an empty manifest");
    } else {
      out.members.push_back(std::move(member));
    }
  }
  if (out.manifest.empty())
    throw BackupError("not a bowline backup, or cut short: " + archive.string() +
                      " has no manifest.json at its end");
  return out;
}

// The manifest must list exactly the members read, with their sizes and digests.
std::int64_t check_manifest(const Unpacked& unpacked) {
  const auto m = nlohmann::json::parse(unpacked.manifest, nullptr, false);
  if (!m.is_object() || m.value("format", "") != "bowline-backup")
    throw BackupError("not a bowline backup: its manifest is not one");
  if (m.value("version", 0) != 1)
    throw BackupError("a backup of version " + m["version"].dump() +
                      ", which this bowline does not read (it reads version 1)");
  const auto& listed = m["members"];
  if (!listed.is_array() || listed.size() != unpacked.members.size())
    throw BackupError("the backup's manifest does not list its members: it was changed or cut");
  for (std::size_t i = 0; i < listed.size(); ++i) {
    const auto& have = unpacked.members[i];
    const auto& want = listed[i];
    if (!want.is_object() || want.value("name", "") != have.name ||
        want.value("size", std::uint64_t{0}) != have.size ||
        want.value("sha256", "") != have.sha256)
      throw BackupError("the backup's member " + have.name +
                        " does not match its manifest (size or SHA-256): the file was changed "
                        "or damaged; nothing was restored");
  }
  if (unpacked.members.empty() || unpacked.members.front().name != "bowline.db")
    throw BackupError("not a bowline backup: it has no store");
  return m.value("createdAt", std::int64_t{0});
}

std::string stamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &tm);
  return text;
}

// The data directory's store and own files go to before-restore-STAMP/ (the WAL with its store).
fs::path move_aside(const fs::path& data_dir) {
  const auto aside = data_dir / ("before-restore-" + stamp());
  fs::create_directory(aside);
  fs::permissions(aside, fs::perms::owner_all, fs::perm_options::replace);
  for (const auto& name : kPlaced)
    for (const std::string suffix : {"", "-wal", "-shm"})
      if (fs::exists(data_dir / (name + suffix)))
        fs::rename(data_dir / (name + suffix), aside / (name + suffix));
  return aside;
}

void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

RestoreReport restore_backup(const RestoreOptions& options) {
  const auto& dir = options.data_dir;
  if (fs::create_directories(dir))
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
  DataDirLock lock(dir);  // never under a running server
  if (fs::exists(dir / "bowline.db") && !options.force)
    throw BackupError(dir.string() +
                      " has a store already; --force moves it aside (to before-restore-TIME/) "
                      "and restores over it");
  const auto staging = dir / (".restore-" + std::to_string(::getpid()));
  fs::remove_all(staging);
  fs::create_directory(staging);
  struct Cleanup {
    fs::path path;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } cleanup{staging};

  const auto unpacked = unpack(options.archive, staging);
  RestoreReport report;
  report.created_at = check_manifest(unpacked);
  {
    // The store must open and take this bowline's schema (a newer one is refused here).
    util::SystemClock clock;
    store::Store store(staging / "bowline.db", clock);
    report.users = store.users().list().size();
    report.templates = store.templates().list().size();
    report.spaces = store.spaces().list().size();
  }
  if (fs::exists(dir / "bowline.db")) report.moved_aside = move_aside(dir);
  const auto settings_dir = dir / ("restored-" + stamp());
  for (const auto& m : unpacked.members) {
    report.members.push_back(m.name);
    if (kPlaced.count(m.name)) {
      // The store's WAL, if its check left one, goes with it.
      for (const std::string suffix : {"", "-wal"})
        if (fs::exists(staging / (m.name + suffix)))
          fs::rename(staging / (m.name + suffix), dir / (m.name + suffix));
      continue;
    }
    if (!fs::exists(settings_dir)) {
      fs::create_directory(settings_dir);
      fs::permissions(settings_dir, fs::perms::owner_all, fs::perm_options::replace);
    }
    fs::rename(staging / m.name, settings_dir / m.name);
    report.settings_copy = settings_dir;
  }
  sync_directory(dir);
  return report;
}

}  // namespace bowline::server
