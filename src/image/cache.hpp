// Where a template's image lives on this node: a bare name in the cloud-image library, an
// absolute path under one of the directories the settings allow (server.kvm.import_paths), or
// an URL downloaded once into the base cache under a name made of a digest of the whole URL
// and its last path segment. The result is always an absolute path to a regular file, ready
// to back a qcow2 overlay.
#pragma once

#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "image/download.hpp"
#include "image/errors.hpp"
#include "spec/spec.hpp"

namespace bowline::image {

struct CacheOptions {
  std::filesystem::path cloud_image_path;  // the library that bare names resolve in
  std::filesystem::path base_image_path;   // where downloads are cached
  DownloadOptions download;
  // The only directories an image path may name (after symbolic links are followed); empty:
  // no path is taken at all.
  std::vector<std::filesystem::path> import_paths;
};

struct Adoption {
  std::filesystem::path cache_file;
  std::string sha256;
  bool linked = false;   // a hard link: the bytes are not stored twice
  bool already = false;  // the cache held these very bytes for the URL before
};

// Safe to share between threads. Downloads run on the thread of the first caller for a
// cache file; later callers for the same file wait for it and get its result or its error
// (single-flight within this process; another process writing the same cache is not
// guarded against).
//
// Cache layout, per URL: `<base>/<key>-<name>` once complete and verified, where <key> is 16
// hex digits of the URL's SHA-256 and <name> its last path segment, so two URLs that end in
// the same file name never share a file; `<key>-<name>.part` while downloading (resumed
// within one resolve; removed when the download fails, and resumed when a crash left it); `.sha256`
// beside it with the complete file's digest in sha256sum's format, so a later imageChecksum is
// checked without reading the image again (recomputed when the image is newer than it); `.url` with
// the URL, for people.
//
// Older caches (bowline's before the key, knot's) hold `<base>/<name>`, which may have come
// from any URL with that name: it is used only when the template's imageChecksum matches it,
// else the URL is downloaded under its own key. It is never removed (overlays may use it).
class ImageCache {
 public:
  explicit ImageCache(CacheOptions options);  // the paths are made absolute here
  ImageCache(const ImageCache&) = delete;
  ImageCache& operator=(const ImageCache&) = delete;

  // The base file for `image`. Progress is called during a download, from the thread that
  // downloads (possibly another caller's); a cached or local image reports nothing.
  // Throws ImageError with a message naming what was looked for; for a path, one message
  // whatever is wrong (missing, unreadable, not a standalone qcow2, outside import_paths), so
  // that no answer tells whether a host file exists.
  std::filesystem::path resolve(const spec::Image& image, const Progress& progress = {});

  // Where `image` is on this host already (a library file, a finished download), without
  // fetching or checking anything; nullopt otherwise (also for a path: users' quotas do not
  // read admins' files).
  std::optional<std::filesystem::path> local_file(const spec::Image& image) const;

  // Makes `file` the cached copy of `url`, as a knot node pre-seeded it (a file named after the
  // URL's last segment, fetched by hand): hard-linked into the cache (copied when the cache is
  // on another file system) with its digest and URL recorded, so templates naming the URL
  // start offline. `file` must be a standalone qcow2. Throws ImageError when it is not, when
  // the URL is no http(s) URL, or when the cache already holds other bytes for the URL.
  Adoption adopt(const std::filesystem::path& file, std::string_view url);

  // Where an URL is cached; throws ImageError when the URL gives no safe file name.
  std::filesystem::path cache_file(std::string_view url) const;
  // Where a cache without keys kept it: `<base>/<name>`.
  std::filesystem::path unkeyed_cache_file(std::string_view url) const;
  // The files a bare library name may be, in the order they are tried.
  std::vector<std::filesystem::path> library_candidates(std::string_view name) const;

  const CacheOptions& options() const { return options_; }

 private:
  struct Flight;
  std::filesystem::path resolve_library(const std::string& name) const;
  std::filesystem::path resolve_path(const std::string& reference) const;
  std::filesystem::path resolve_url(const spec::Image& image, const Progress& progress);
  void download(const spec::Image& image, const std::filesystem::path& file,
                const Progress& progress);
  void verify_cached(const spec::Image& image, const std::filesystem::path& file) const;
  // The old layout's file for `image` when its imageChecksum vouches for it.
  std::optional<std::filesystem::path> vouched_unkeyed(const spec::Image& image) const;

  CacheOptions options_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Flight>> flights_;  // by cache file name (keyed)
};

}  // namespace bowline::image
