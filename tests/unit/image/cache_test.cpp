// ImageCache without a network: library names, absolute paths, cache file names, and the
// checks that keep every name inside its directory.
#include "image/cache.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "image/sha256.hpp"
#include "image_test_support.hpp"
#include "util/hash.hpp"

namespace bowline::image::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

spec::Image library(const std::string& name) {
  return {spec::ImageKind::Library, name, {}};
}
spec::Image path_image(const std::string& path) {
  return {spec::ImageKind::Path, path, {}};
}

class Cache : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_.file("library"));
    options_.cloud_image_path = dir_.file("library");
    options_.base_image_path = dir_.file("base");
  }
  std::string message_of(const spec::Image& image) {
    ImageCache cache(options_);
    try {
      cache.resolve(image);
    } catch (const ImageError& e) {
      return e.what();
    }
    ADD_FAILURE() << "no error for " << image.reference;
    return {};
  }

  TempDir dir_;
  CacheOptions options_;
};

TEST_F(Cache, ALibraryNameFindsTheExactFileFirst) {
  write_file(dir_.file("library/debian-12"), "exact");
  write_file(dir_.file("library/debian-12.qcow2"), "qcow2");
  ImageCache cache(options_);
  EXPECT_EQ(cache.resolve(library("debian-12")), fs::path(dir_.file("library/debian-12")));
}

TEST_F(Cache, ALibraryNameFindsTheQcow2Variant) {
  write_file(dir_.file("library/debian-12.qcow2"), "qcow2");
  ImageCache cache(options_);
  EXPECT_EQ(cache.resolve(library("debian-12")), fs::path(dir_.file("library/debian-12.qcow2")));
  EXPECT_EQ(cache.resolve(library("debian-12.qcow2")),
            fs::path(dir_.file("library/debian-12.qcow2")));
}

TEST_F(Cache, AMissingLibraryImageSaysWhatItLookedForButNotWhere) {
  fs::create_directories(dir_.file("library/ubuntu"));  // a directory is not an image
  const auto message = message_of(library("ubuntu"));
  EXPECT_THAT(message, HasSubstr("the image library has no \"ubuntu\" (nor \"ubuntu.qcow2\")"));
  EXPECT_THAT(message, HasSubstr("https:// URL"));
  EXPECT_THAT(message, ::testing::Not(HasSubstr(dir_.path())));
}

TEST_F(Cache, TheLibraryIsAbsoluteEvenWhenConfiguredRelative) {
  write_file(dir_.file("library/x.qcow2"), "x");
  const auto cwd = fs::current_path();
  fs::current_path(dir_.path());
  options_.cloud_image_path = "library";
  ImageCache cache(options_);
  fs::current_path(cwd);
  const auto found = cache.resolve(library("x"));
  EXPECT_TRUE(found.is_absolute());
  EXPECT_EQ(found, fs::path(dir_.file("library/x.qcow2")));
}

TEST_F(Cache, NamesThatLeaveTheirDirectoryAreRefused) {
  for (const std::string bad : {"..", ".", "", "../etc/passwd", "a/b"})
    EXPECT_FALSE(message_of(library(bad)).empty()) << bad;
  ImageCache cache(options_);
  EXPECT_THROW(cache.cache_file("https://example.org/images/.."), ImageError);
  EXPECT_THROW(cache.cache_file("https://example.org/images/."), ImageError);
  EXPECT_THROW(cache.cache_file("https://example.org/images/"), ImageError);
  EXPECT_THROW(cache.cache_file("https://example.org/x.qcow2.part"), ImageError);
  EXPECT_THROW(cache.cache_file("https://example.org/x.qcow2.sha256"), ImageError);
  EXPECT_THROW(cache.cache_file("https://example.org/x.qcow2.url"), ImageError);
}

TEST_F(Cache, AnUrlIsCachedUnderADigestOfItAndItsLastPathSegmentWithoutTheQuery) {
  ImageCache cache(options_);
  const std::string url = "https://cloud.debian.org/images/debian-12-generic-amd64.qcow2?x=1";
  EXPECT_EQ(cache.cache_file(url),
            fs::path(dir_.file("base/" + util::sha256_hex(url).substr(0, 16) +
                               "-debian-12-generic-amd64.qcow2")));
  EXPECT_EQ(cache.unkeyed_cache_file(url),
            fs::path(dir_.file("base/debian-12-generic-amd64.qcow2")));
  // A name too long for the key in front keeps its end.
  const std::string name(250, 'n');
  const auto file = cache.cache_file("https://h/" + name + ".qcow2").filename().string();
  EXPECT_EQ(file.size(), 240u);
  EXPECT_TRUE(file.ends_with("nnn.qcow2")) << file;
}

// A standalone qcow2 made by the real qemu-img.
void make_qcow2(const std::string& file, const std::string& backing = {}) {
  const auto command = "qemu-img create -q -f qcow2 " +
                       (backing.empty() ? std::string() : "-F qcow2 -b '" + backing + "' ") + "'" +
                       file + "' 1M";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

// The hostile-user checks of image paths (ctest -L security).
class security_image_paths : public Cache {};

TEST_F(security_image_paths, NoPathIsTakenUnlessTheSettingsListItsDirectory) {
  make_qcow2(dir_.file("mine.qcow2"));
  EXPECT_THAT(message_of(path_image(dir_.file("mine.qcow2"))),
              HasSubstr("this server takes no image paths"));
  options_.import_paths = {dir_.file("allowed")};
  fs::create_directories(dir_.file("allowed/sub"));
  make_qcow2(dir_.file("allowed/sub/ok.qcow2"));
  ImageCache cache(options_);
  EXPECT_EQ(cache.resolve(path_image(dir_.file("allowed/sub/ok.qcow2"))),
            fs::canonical(dir_.file("allowed/sub/ok.qcow2")));
}

// Missing, a directory, unreadable, not qcow2, backed by another file, outside the allowed
// directories (by name, by "..", by a symbolic link or a sibling that shares the prefix):
// every answer is the same, so none tells whether a host file exists.
TEST_F(security_image_paths, EveryRefusedPathGetsTheSameAnswer) {
  options_.import_paths = {dir_.file("allowed")};
  fs::create_directories(dir_.file("allowed"));
  fs::create_directories(dir_.file("allowed2"));
  make_qcow2(dir_.file("allowed2/sibling.qcow2"));
  make_qcow2(dir_.file("outside.qcow2"));
  make_qcow2(dir_.file("allowed/backed.qcow2"), dir_.file("outside.qcow2"));
  write_file(dir_.file("allowed/raw.img"), std::string(4096, 'x'));
  fs::create_symlink(dir_.file("outside.qcow2"), dir_.file("allowed/link.qcow2"));
  make_qcow2(dir_.file("allowed/unreadable.qcow2"));
  fs::permissions(dir_.file("allowed/unreadable.qcow2"), fs::perms::none);
  const std::string same = message_of(path_image(dir_.file("allowed/missing.qcow2")));
  EXPECT_THAT(same, HasSubstr("no usable image at that path"));
  for (const auto& bad :
       {dir_.file("allowed"), dir_.file("allowed/raw.img"), dir_.file("allowed/backed.qcow2"),
        dir_.file("allowed/link.qcow2"), dir_.file("allowed/../outside.qcow2"),
        dir_.file("outside.qcow2"), dir_.file("allowed2/sibling.qcow2"), std::string("/etc/shadow"),
        std::string("/etc/no-such-file")}) {
    const auto message = message_of(path_image(bad));
    EXPECT_EQ(message, same) << bad;
    EXPECT_THAT(message, ::testing::Not(HasSubstr("/"))) << bad;
  }
  // Unreadable only counts where the test is not root (root reads any mode).
  if (::geteuid() != 0) {
    EXPECT_EQ(message_of(path_image(dir_.file("allowed/unreadable.qcow2"))), same);
  }
}

TEST_F(Cache, APreSeededCacheFileIsUsedWithoutANetworkAndItsChecksumChecked) {
  fs::create_directories(dir_.file("base"));
  const auto bytes = test_bytes(100000, 1);
  // No server listens at this address: the cache must not ask.
  spec::Image image{spec::ImageKind::Url, "https://127.0.0.1:1/images/seeded.qcow2", {}};
  ImageCache cache(options_);
  const auto file = cache.cache_file(image.reference);
  write_file(file.string(), bytes);
  EXPECT_EQ(cache.resolve(image), file);

  image.sha256 = util::sha256_hex(bytes);
  EXPECT_EQ(cache.resolve(image), file);
  EXPECT_EQ(read_file(file.string() + ".sha256"),
            util::sha256_hex(bytes) + "  " + file.filename().string() + "\n");

  image.sha256 = std::string(64, 'a');
  try {
    cache.resolve(image);
    FAIL() << "no error";
  } catch (const ImageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("has sha256:" + util::sha256_hex(bytes)));
    EXPECT_THAT(e.what(), HasSubstr("imageChecksum is sha256:" + std::string(64, 'a')));
  }
}

// The old layout, <base>/<name>, seeded by hand or by an older bowline or knot: the checksum
// says whether it is the image the template means.
using security_cache = Cache;

TEST_F(security_cache, AnOldLayoutFileIsUsedOnlyWithAMatchingChecksum) {
  fs::create_directories(dir_.file("base"));
  const auto bytes = test_bytes(100000, 1);
  write_file(dir_.file("base/seeded.qcow2"), bytes);
  ImageCache cache(options_);
  spec::Image image{spec::ImageKind::Url, "https://127.0.0.1:1/images/seeded.qcow2",
                    util::sha256_hex(bytes)};
  EXPECT_EQ(cache.resolve(image), fs::path(dir_.file("base/seeded.qcow2")));
  // Without one, or with another, it could be any URL's file: the URL is asked (and here
  // nothing answers).
  for (const auto& sum : {std::optional<std::string>{}, std::optional(std::string(64, 'a'))}) {
    image.sha256 = sum;
    try {
      cache.resolve(image);
      ADD_FAILURE() << "the old file was used";
    } catch (const ImageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("downloading https://127.0.0.1:1/images/seeded.qcow2"));
    }
  }
  EXPECT_EQ(read_file(dir_.file("base/seeded.qcow2")), bytes);
}

TEST_F(Cache, AReplacedCacheFileIsHashedAgain) {
  fs::create_directories(dir_.file("base"));
  write_file(dir_.file("base/img.qcow2"), "old");
  ImageCache cache(options_);
  spec::Image image{spec::ImageKind::Url, "https://127.0.0.1:1/img.qcow2", util::sha256_hex("old")};
  cache.resolve(image);
  // Replaced by hand later: its digest record is older than the file now.
  fs::last_write_time(dir_.file("base/img.qcow2.sha256"),
                      fs::file_time_type::clock::now() - std::chrono::hours(1));
  write_file(dir_.file("base/img.qcow2"), "new");
  image.sha256 = util::sha256_hex("new");
  EXPECT_NO_THROW(cache.resolve(image));
}

TEST(Sha256, MatchesTheOneShotDigest) {
  TempDir dir;
  const auto bytes = test_bytes(3 * 1024 * 1024 + 17, 2);
  write_file(dir.file("f"), bytes);
  EXPECT_EQ(sha256_file(dir.file("f")), util::sha256_hex(bytes));
  Sha256 h;
  h.update(bytes.data(), 5);
  h.update(bytes.data() + 5, bytes.size() - 5);
  EXPECT_EQ(h.hex(), util::sha256_hex(bytes));
}

}  // namespace
}  // namespace bowline::image::test
