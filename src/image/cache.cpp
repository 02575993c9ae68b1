#include "image/cache.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

#include "image/sha256.hpp"
#include "image/standalone_qcow2.hpp"
#include "spec/validators.hpp"
#include "util/hash.hpp"

namespace bowline::image {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPartSuffix = ".part";
constexpr std::string_view kDigestSuffix = ".sha256";
constexpr std::string_view kUrlSuffix = ".url";
constexpr std::size_t kKeyDigits = 16;     // 64 bits of the URL's SHA-256
constexpr std::size_t kMaxFileName = 240;  // under NAME_MAX (255) with a sidecar's suffix

// A single file name inside a directory of ours: never a path, never a way out of it.
void check_file_name(std::string_view name, std::string_view what) {
  if (name.empty()) throw ImageError(std::string(what) + " is empty");
  if (name == "." || name == "..")
    throw ImageError(std::string(what) + " \"" + std::string(name) + "\" is not a file name");
  if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos)
    throw ImageError(std::string(what) + " \"" + std::string(name) +
                     "\" must be a single file name, without '/'");
}

fs::path with_suffix(const fs::path& file, std::string_view suffix) {
  return fs::path(file.string() + std::string(suffix));
}

bool is_hex_digest(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// The digest recorded next to `file`, unless the file changed after it was recorded.
std::optional<std::string> recorded_digest(const fs::path& file) {
  const auto sidecar = with_suffix(file, kDigestSuffix);
  std::error_code ec;
  const auto file_time = fs::last_write_time(file, ec);
  if (ec) return std::nullopt;
  const auto sidecar_time = fs::last_write_time(sidecar, ec);
  if (ec || sidecar_time < file_time) return std::nullopt;
  std::ifstream in(sidecar);
  std::string digest;
  if (!(in >> digest) || !is_hex_digest(digest)) return std::nullopt;
  return digest;
}

// Best effort: without it the next check reads the image again.
void record_digest(const fs::path& file, const std::string& digest) {
  const auto sidecar = with_suffix(file, kDigestSuffix);
  static std::atomic<unsigned> counter{0};
  const auto temporary = fs::path(sidecar.string() + ".tmp" + std::to_string(::getpid()) + "-" +
                                  std::to_string(counter.fetch_add(1)));
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << digest << "  " << file.filename().string() << "\n";
    if (!out) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
      return;
    }
  }
  std::error_code ec;
  fs::rename(temporary, sidecar, ec);
  if (ec) fs::remove(temporary, ec);
}

// Best effort, for people reading the cache directory: which URL a keyed file came from.
void record_url(const fs::path& file, const std::string& url) {
  std::ofstream out(with_suffix(file, kUrlSuffix), std::ios::trunc);
  out << url << "\n";
}

// Whether `path` (canonical) is `root` itself or inside it, by whole components.
bool is_within(const fs::path& path, const fs::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (r->empty()) continue;  // a root's trailing separator
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

std::string describe(const std::error_code& ec) {
  return ec.message();
}

}  // namespace

struct ImageCache::Flight {
  std::promise<void> done;
  std::shared_future<void> result = done.get_future().share();
  std::mutex mutex;
  std::vector<const Progress*> listeners;  // each lives until its caller has the result

  void listen(const Progress& progress) {
    if (!progress) return;
    std::lock_guard lock(mutex);
    listeners.push_back(&progress);
  }
  void report(std::uint64_t done_bytes, std::uint64_t total) {
    std::vector<const Progress*> now;
    {
      std::lock_guard lock(mutex);
      now = listeners;
    }
    for (const auto* p : now) (*p)(done_bytes, total);
  }
};

ImageCache::ImageCache(CacheOptions options) : options_(std::move(options)) {
  // Compared after realpath(): a root given through a symbolic link is taken as its target.
  for (auto& root : options_.import_paths) {
    std::error_code ec;
    auto canonical = fs::weakly_canonical(fs::absolute(root), ec);
    root = ec ? fs::absolute(root).lexically_normal() : canonical;
  }
  if (!options_.cloud_image_path.empty())
    options_.cloud_image_path = fs::absolute(options_.cloud_image_path).lexically_normal();
  if (!options_.base_image_path.empty())
    options_.base_image_path = fs::absolute(options_.base_image_path).lexically_normal();
}

fs::path ImageCache::unkeyed_cache_file(std::string_view url) const {
  const auto name = spec::url_file_name(url);
  check_file_name(name, "the file name of the image URL");
  const std::string_view view(name);
  if (view.ends_with(kPartSuffix) || view.ends_with(kDigestSuffix) || view.ends_with(kUrlSuffix))
    throw ImageError("the image URL's file name \"" + name +
                     "\" ends in .part, .sha256 or .url, which the base cache keeps for itself");
  if (options_.base_image_path.empty())
    throw ImageError("no base image cache is configured for downloads");
  return options_.base_image_path / name;
}

fs::path ImageCache::cache_file(std::string_view url) const {
  auto name = unkeyed_cache_file(url).filename().string();
  const auto key = util::sha256_hex(url).substr(0, kKeyDigits);
  // A very long name keeps its end (the extension): the key tells URLs apart anyway.
  if (key.size() + 1 + name.size() > kMaxFileName)
    name = name.substr(name.size() - (kMaxFileName - key.size() - 1));
  return options_.base_image_path / (key + "-" + name);
}

std::vector<fs::path> ImageCache::library_candidates(std::string_view name) const {
  check_file_name(name, "the image name");
  std::vector<fs::path> out{options_.cloud_image_path / std::string(name)};
  if (!name.ends_with(".qcow2"))
    out.push_back(options_.cloud_image_path / (std::string(name) + ".qcow2"));
  return out;
}

fs::path ImageCache::resolve(const spec::Image& image, const Progress& progress) {
  switch (image.kind) {
    case spec::ImageKind::Library:
      return resolve_library(image.reference);
    case spec::ImageKind::Url:
      return resolve_url(image, progress);
    case spec::ImageKind::Path:
      return resolve_path(image.reference);
  }
  throw ImageError("unknown image kind");
}

std::optional<fs::path> ImageCache::local_file(const spec::Image& image) const {
  std::error_code ec;
  try {
    if (image.kind == spec::ImageKind::Library) {
      for (const auto& candidate : library_candidates(image.reference))
        if (fs::is_regular_file(candidate, ec)) return candidate;
    } else if (image.kind == spec::ImageKind::Url) {
      if (const auto file = cache_file(image.reference); fs::is_regular_file(file, ec)) return file;
    }
  } catch (const ImageError&) {
  }
  return std::nullopt;
}

fs::path ImageCache::resolve_path(const std::string& reference) const {
  if (options_.import_paths.empty())
    throw ImageError(
        "this server takes no image paths (server.kvm.import_paths is empty): name an image of "
        "the library or an https:// URL");
  // The same words for a file that is missing, unreadable, a link out of the allowed
  // directories or no standalone qcow2: an answer must not tell which host files exist.
  const auto refused = ImageError(
      "no usable image at that path: it must be a standalone qcow2 file under "
      "server.kvm.import_paths");
  char* real = ::realpath(reference.c_str(), nullptr);
  if (!real) throw refused;
  const fs::path path(real);
  std::free(real);
  const bool inside = std::any_of(options_.import_paths.begin(), options_.import_paths.end(),
                                  [&](const fs::path& root) { return is_within(path, root); });
  std::error_code ec;
  if (!inside || !fs::is_regular_file(path, ec) || ::access(path.c_str(), R_OK) != 0 ||
      !standalone_qcow2_problem(path).empty())
    throw refused;
  return path;
}

fs::path ImageCache::resolve_library(const std::string& name) const {
  const auto candidates = library_candidates(name);
  for (const auto& candidate : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) return candidate;
    if (ec && ec != std::errc::no_such_file_or_directory)
      throw ImageError("the library's image \"" + name + "\" cannot be read: " + describe(ec));
  }
  // Said without the library's directory (a host path), which the admin knows from the
  // settings; the names tried are the name and the name with .qcow2.
  throw ImageError("the image library has no \"" + name + "\"" +
                   (name.ends_with(".qcow2") ? "" : " (nor \"" + name + ".qcow2\")") +
                   ": an admin places images in server.kvm.cloud_image_path, or use an "
                   "https:// URL");
}

fs::path ImageCache::resolve_url(const spec::Image& image, const Progress& progress) {
  const auto file = cache_file(image.reference);
  const auto key = file.filename().string();
  if (std::error_code ec; !fs::exists(file, ec))
    if (auto old = vouched_unkeyed(image)) return *old;
  std::shared_ptr<Flight> flight;
  bool leader = false;
  {
    std::lock_guard lock(mutex_);
    if (auto it = flights_.find(key); it != flights_.end()) {
      flight = it->second;
    } else {
      std::error_code ec;
      if (!fs::exists(file, ec)) {
        flight = std::make_shared<Flight>();
        flights_.emplace(key, flight);
        leader = true;
      }
    }
    if (flight) flight->listen(progress);
  }

  if (!flight) {  // cached
    if (!fs::is_regular_file(file))
      throw ImageError("the cached base image " + file.string() + " is not a regular file");
    verify_cached(image, file);
    return file;
  }
  if (!leader) {
    flight->result.get();  // the leader's error, if it had one
    verify_cached(image, file);
    return file;
  }

  try {
    download(image, file,
             [&flight](std::uint64_t done, std::uint64_t total) { flight->report(done, total); });
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      flights_.erase(key);
    }
    flight->done.set_exception(std::current_exception());
    throw;
  }
  {
    std::lock_guard lock(mutex_);
    flights_.erase(key);
  }
  flight->done.set_value();
  return file;
}

void ImageCache::download(const spec::Image& image, const fs::path& file,
                          const Progress& progress) {
  std::error_code ec;
  fs::create_directories(options_.base_image_path, ec);
  if (ec)
    throw ImageError("cannot create the base image cache " + options_.base_image_path.string() +
                     ": " + describe(ec) + " (it must be writable by bowline)");
  const auto part = with_suffix(file, kPartSuffix);
  Downloaded got;
  try {
    got = download_file(image.reference, part, options_.download, progress);
  } catch (const ImageError& e) {
    // A failed download leaves nothing: a partial file would hold disk that no quota counts
    // (the download retries and resumes within the call, DownloadOptions::max_attempts).
    fs::remove(part, ec);
    std::string why = e.what();
    const auto kept = why.find(" bytes kept; the next try resumes)");
    if (kept == std::string::npos) throw;
    throw ImageError(why.substr(0, why.rfind(" (", kept)) + "; what had arrived is removed");
  } catch (...) {
    fs::remove(part, ec);
    throw;
  }
  if (image.sha256 && got.sha256 != *image.sha256) {
    fs::remove(part, ec);
    throw ImageError("the image downloaded from " + image.reference +
                     " does not match its imageChecksum: expected sha256:" + *image.sha256 +
                     ", got sha256:" + got.sha256 + "; the download was removed");
  }
  fs::rename(part, file, ec);
  if (ec) {
    const auto why = describe(ec);
    fs::remove(part, ec);
    throw ImageError("cannot move the download into the base image cache: " + why);
  }
  record_digest(file, got.sha256);
  record_url(file, image.reference);
}

void ImageCache::verify_cached(const spec::Image& image, const fs::path& file) const {
  if (!image.sha256) return;
  auto digest = recorded_digest(file);
  if (!digest) {
    digest = sha256_file(file);
    record_digest(file, *digest);
  }
  if (*digest != *image.sha256)
    throw ImageError("the cached base image " + file.string() + " has sha256:" + *digest +
                     ", but the template's imageChecksum is sha256:" + *image.sha256 +
                     ": remove the file to download " + image.reference + " again");
}

std::optional<fs::path> ImageCache::vouched_unkeyed(const spec::Image& image) const {
  if (!image.sha256) return std::nullopt;  // it may be another URL's file of the same name
  const auto file = unkeyed_cache_file(image.reference);
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) return std::nullopt;
  auto digest = recorded_digest(file);
  if (!digest) {
    digest = sha256_file(file);
    record_digest(file, *digest);
  }
  if (*digest != *image.sha256) return std::nullopt;
  return file;
}

}  // namespace bowline::image

namespace bowline::image {

Adoption ImageCache::adopt(const fs::path& file, std::string_view url) {
  spec::ImageKind kind{};
  if (auto problem = spec::check_image(url, kind); !problem.empty() || kind != spec::ImageKind::Url)
    throw ImageError("\"" + std::string(url) + "\" is not an http(s) URL of an image" +
                     (problem.empty() ? "" : ": " + problem));
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) throw ImageError(file.string() + " is not a regular file");
  if (auto problem = standalone_qcow2_problem(file); !problem.empty())
    throw ImageError(file.string() + " cannot be a base image: " + problem +
                     " (convert it with qemu-img convert -O qcow2 " + file.string() +
                     " NEW.qcow2 and adopt that)");
  Adoption adopted{.cache_file = cache_file(url), .sha256 = sha256_file(file)};
  if (fs::exists(adopted.cache_file, ec)) {
    auto digest = recorded_digest(adopted.cache_file);
    if (!digest) digest = sha256_file(adopted.cache_file);
    if (*digest != adopted.sha256)
      throw ImageError("the cache already holds other bytes for " + std::string(url) + " (" +
                       adopted.cache_file.string() + ", sha256:" + *digest +
                       "); remove that file first to adopt this one");
    adopted.already = true;
  } else {
    fs::create_directories(options_.base_image_path, ec);
    if (ec)
      throw ImageError("cannot create the base image cache " + options_.base_image_path.string() +
                       ": " + describe(ec));
    // A hard link shares the bytes and leaves overlays that use the old name working.
    fs::create_hard_link(file, adopted.cache_file, ec);
    adopted.linked = !ec;
    if (ec) {
      const auto part = with_suffix(adopted.cache_file, kPartSuffix);
      fs::copy_file(file, part, fs::copy_options::overwrite_existing, ec);
      if (!ec) fs::rename(part, adopted.cache_file, ec);
      if (ec) {
        const auto why = describe(ec);
        fs::remove(part, ec);
        throw ImageError("cannot copy " + file.string() + " into the base image cache: " + why);
      }
    }
  }
  record_digest(adopted.cache_file, adopted.sha256);
  record_url(adopted.cache_file, std::string(url));
  return adopted;
}

}  // namespace bowline::image
