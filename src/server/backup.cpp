#include "server/backup.hpp"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/space_archive.hpp"
#include "image/sha256.hpp"
#include "store/backup.hpp"

namespace bowline::server {
namespace fs = std::filesystem;
namespace tar = engine::archive;

namespace {

constexpr const char* kFormat = "bowline-backup";
constexpr const char* kStoreMember = "bowline.db";
constexpr const char* kSettingsMember = "settings.txt";
constexpr const char* kConfigMember = "config.yaml";
constexpr const char* kManifestMember = "manifest.json";
// The server's own files in its data directory, kept beside the store.
constexpr const char* kOwnFiles[] = {"admin.token", "tls-cert.pem", "tls-key.pem",
                                     "guest-guard.tag"};
constexpr std::size_t kChunk = 1 << 20;

// Members written one after another, each hashed as it goes, then the manifest.
class BackupWriter {
 public:
  BackupWriter(const std::function<void(std::string_view)>& sink, std::int64_t now_ms)
      : sink_(sink), mtime_(now_ms / 1000) {}

  void add(const std::string& name, std::string_view data) {
    sink_(tar::tar_header(name, data.size(), mtime_));
    image::Sha256 hash;
    hash.update(data.data(), data.size());
    sink_(data);
    sink_(tar::tar_padding(data.size()));
    members_.push_back({name, data.size(), hash.hex()});
  }

  void add_file(const std::string& name, const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw BackupError("cannot read " + path.string());
    const auto size = fs::file_size(path);
    sink_(tar::tar_header(name, size, mtime_));
    image::Sha256 hash;
    std::string buffer(kChunk, '\0');
    std::uint64_t left = size;
    while (left > 0) {
      const auto want = static_cast<std::streamsize>(std::min<std::uint64_t>(left, kChunk));
      if (!in.read(buffer.data(), want)) throw BackupError("cannot read " + path.string());
      hash.update(buffer.data(), static_cast<std::size_t>(want));
      sink_(std::string_view(buffer.data(), static_cast<std::size_t>(want)));
      left -= static_cast<std::uint64_t>(want);
    }
    sink_(tar::tar_padding(size));
    members_.push_back({name, size, hash.hex()});
  }

  void finish(std::int64_t created_at) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& m : members_)
      list.push_back({{"name", m.name}, {"size", m.size}, {"sha256", m.sha256}});
    const nlohmann::ordered_json manifest = {
        {"format", kFormat}, {"version", 1}, {"createdAt", created_at}, {"members", list}};
    const auto text = manifest.dump(2) + "\n";
    sink_(tar::tar_header(kManifestMember, text.size(), mtime_));
    sink_(text);
    sink_(tar::tar_padding(text.size()));
    sink_(std::string(1024, '\0'));  // the end-of-archive blocks
  }

 private:
  const std::function<void(std::string_view)>& sink_;
  std::int64_t mtime_;
  std::vector<tar::Member> members_;
};

std::string read_small(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) throw BackupError("cannot read " + path.string());
  return text;
}

// Removes a file (or directory) when it goes out of scope.
struct Removal {
  fs::path path;
  ~Removal() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

}  // namespace

void write_backup(const BackupSource& source, const std::function<void(std::string_view)>& sink) {
  static std::atomic<int> counter{0};
  // The copy sits in the data directory (0700) for as long as it is read, never elsewhere.
  const Removal copy{source.data_dir / (".backup-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(counter++) + ".db")};
  try {
    store::backup_store(source.data_dir / kStoreMember, copy.path);
  } catch (const std::exception& e) {
    throw BackupError(std::string("cannot copy the store: ") + e.what());
  }
  BackupWriter writer(sink, source.now_ms);
  writer.add_file(kStoreMember, copy.path);
  for (const char* name : kOwnFiles)
    if (fs::is_regular_file(source.data_dir / name))
      writer.add(name, read_small(source.data_dir / name));
  writer.add(kSettingsMember, source.settings_text);
  if (source.config_file) writer.add(kConfigMember, read_small(*source.config_file));
  writer.finish(source.now_ms);
}

}  // namespace bowline::server
