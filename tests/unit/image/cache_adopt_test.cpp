// ImageCache::adopt: a knot node's pre-seeded base image (named after the URL's last segment)
// becomes the URL's keyed cache file, so a template naming the URL starts with no network.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>

#include "image/cache.hpp"
#include "image/sha256.hpp"
#include "image_test_support.hpp"

namespace bowline::image::test {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// No server listens at this address: resolving must not need one.
constexpr const char* kUrl = "https://127.0.0.1:1/knot/debian-12-genericcloud-amd64.qcow2";

void make_qcow2(const std::string& file, const std::string& backing = {}) {
  const auto command = "qemu-img create -q -f qcow2 " +
                       (backing.empty() ? std::string() : "-F qcow2 -b '" + backing + "' ") + "'" +
                       file + "' 1M";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

class adopt_image : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.base_image_path = dir_.file("base");
    fs::create_directories(options_.base_image_path);
    seeded_ = dir_.file("base/debian-12-genericcloud-amd64.qcow2");  // where knot keeps it
    make_qcow2(seeded_);
  }
  std::string refusal(const std::string& file, const std::string& url) {
    ImageCache cache(options_);
    try {
      cache.adopt(file, url);
    } catch (const ImageError& e) {
      return e.what();
    }
    ADD_FAILURE() << "adopted " << file << " for " << url;
    return {};
  }

  TempDir dir_;
  CacheOptions options_;
  std::string seeded_;
};

TEST_F(adopt_image, APreSeededFileResolvesForItsUrlOfflineWithItsDigestRecorded) {
  ImageCache cache(options_);
  const spec::Image image{spec::ImageKind::Url, kUrl, {}};
  // Before: the unkeyed file is not trusted without a checksum, and nothing answers.
  EXPECT_THROW(cache.resolve(image), ImageError);

  const auto adopted = cache.adopt(seeded_, kUrl);
  EXPECT_EQ(adopted.cache_file, cache.cache_file(kUrl));
  EXPECT_TRUE(adopted.linked);
  EXPECT_FALSE(adopted.already);
  EXPECT_EQ(adopted.sha256, sha256_file(seeded_));
  struct stat a {
  }, b{};
  ASSERT_EQ(::stat(seeded_.c_str(), &a), 0);
  ASSERT_EQ(::stat(adopted.cache_file.c_str(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino) << "a hard link, not a second copy";
  EXPECT_EQ(read_file(adopted.cache_file.string() + ".url"), std::string(kUrl) + "\n");

  EXPECT_EQ(cache.resolve(image), adopted.cache_file);
  // A template that pins the checksum is checked against the recorded digest.
  EXPECT_EQ(cache.resolve({spec::ImageKind::Url, kUrl, adopted.sha256}), adopted.cache_file);
  EXPECT_THROW(cache.resolve({spec::ImageKind::Url, kUrl, std::string(64, 'a')}), ImageError);
  // The knot file stays where overlays may use it.
  EXPECT_TRUE(fs::exists(seeded_));
}

TEST_F(adopt_image, AdoptingTheSameBytesAgainSaysSoAndOtherBytesAreRefused) {
  ImageCache cache(options_);
  cache.adopt(seeded_, kUrl);
  EXPECT_TRUE(cache.adopt(seeded_, kUrl).already);

  const auto other = dir_.file("other.qcow2");
  ASSERT_EQ(std::system(("qemu-img create -q -f qcow2 '" + other + "' 2M").c_str()), 0);
  const auto why = refusal(other, kUrl);
  EXPECT_THAT(why, HasSubstr("already holds other bytes for " + std::string(kUrl)));
  EXPECT_THAT(why, HasSubstr("remove that file first"));
  EXPECT_EQ(sha256_file(cache.cache_file(kUrl)), sha256_file(seeded_));
}

TEST_F(adopt_image, OnlyAStandaloneQcow2ForAnHttpUrlIsAdopted) {
  write_file(dir_.file("raw.img"), std::string(4096, 'x'));
  EXPECT_THAT(refusal(dir_.file("raw.img"), kUrl), HasSubstr("qemu-img convert -O qcow2"));
  // A backing file could name any file of the host: never a base image.
  const auto backed = dir_.file("backed.qcow2");
  make_qcow2(backed, seeded_);
  EXPECT_THAT(refusal(backed, kUrl), HasSubstr("cannot be a base image"));
  EXPECT_THAT(refusal(dir_.file("missing.qcow2"), kUrl), HasSubstr("is not a regular file"));
  EXPECT_THAT(refusal(seeded_, "/var/lib/images/debian.qcow2"), HasSubstr("not an http(s) URL"));
  EXPECT_THAT(refusal(seeded_, "debian-12"), HasSubstr("not an http(s) URL"));
  EXPECT_FALSE(fs::exists(ImageCache(options_).cache_file(kUrl)));
}

}  // namespace
}  // namespace bowline::image::test
