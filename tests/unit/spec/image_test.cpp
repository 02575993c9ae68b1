// image (bare library name, http(s) URL, absolute path) and imageChecksum.
#include <gtest/gtest.h>

#include <cctype>
#include <vector>

#include "spec/validators.hpp"
#include "spec_test_support.hpp"

namespace bowline::spec {
namespace {

using test::ErrorCount;
using test::HasError;
using test::load;
using test::Valid;

LoadResult with_image(const std::string& image) {
  return load("network: {mode: nat}\nimage: " + image + "\n");
}

void expect_image(const std::string& yaml_value, ImageKind kind, const std::string& reference) {
  SCOPED_TRACE(yaml_value);
  const auto r = with_image(yaml_value);
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->image.kind, kind);
  EXPECT_EQ(r.spec->image.reference, reference);
}

void expect_image_error(const std::string& yaml_value, const std::string& message) {
  SCOPED_TRACE(yaml_value);
  const auto r = with_image(yaml_value);
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "image", 2, 8, message));
}

TEST(Image, BareLibraryNames) {
  expect_image("debian-12", ImageKind::Library, "debian-12");
  expect_image("ubuntu_24.04-server.qcow2", ImageKind::Library, "ubuntu_24.04-server.qcow2");
  expect_image("'12'", ImageKind::Library, "12");
}

TEST(Image, BareNameMustNotBeDotOrDotDot) {
  expect_image_error(".", "an image name must not be . or ..");
  expect_image_error("..", "an image name must not be . or ..");
}

TEST(Image, BareNameCharacters) {
  expect_image_error("deb!an", "an image name may only hold letters, digits, '.', '_' and '-'");
  expect_image_error("'debian:12'", "may only hold letters, digits");
}

TEST(Image, HttpsAndHttpUrls) {
  expect_image("https://cloud.debian.org/images/debian-12-genericcloud-amd64.qcow2", ImageKind::Url,
               "https://cloud.debian.org/images/debian-12-genericcloud-amd64.qcow2");
  expect_image("HTTPS://Mirror.Local/img.qcow2?token=abc#frag", ImageKind::Url,
               "HTTPS://Mirror.Local/img.qcow2?token=abc#frag");
  EXPECT_EQ(url_file_name("https://h/a/b.qcow2?x=/y#z"), "b.qcow2");
}

TEST(Image, OtherSchemesAreRejected) {
  expect_image_error("ftp://mirror/debian.qcow2",
                     "the scheme ftp:// is not supported: use https:// (or http://)");
  expect_image_error("file:///var/lib/debian.qcow2", "the scheme file:// is not supported");
  expect_image_error("s3://bucket/debian.qcow2", "the scheme s3:// is not supported");
}

TEST(Image, UrlNeedsAHostAndAFileName) {
  expect_image_error("https:///debian.qcow2", "the URL has no host");
  expect_image_error("https://mirror.local", "the URL must end in a file name");
  expect_image_error("https://mirror.local/images/",
                     "the URL's file name is empty (the base image is cached under that name)");
  expect_image_error("https://mirror.local/..", "the URL's file name must not be . or ..");
  expect_image_error("https://mirror.local/a%20b.qcow2", "the URL's file name may only hold");
}

TEST(Image, AbsolutePaths) {
  expect_image("/var/lib/bowline/images/debian.qcow2", ImageKind::Path,
               "/var/lib/bowline/images/debian.qcow2");
  expect_image("/srv/./x..y/img", ImageKind::Path, "/srv/./x..y/img");
}

TEST(Image, PathTraversalIsRejected) {
  expect_image_error("/var/lib/../../etc/shadow", "the image path must not contain '..'");
  expect_image_error("/..", "the image path must not contain '..'");
  expect_image_error("/images/..", "the image path must not contain '..'");
}

TEST(Image, PathMustNameAFile) {
  expect_image_error("/var/lib/images/", "the image path names a directory, not a file");
}

TEST(Image, RelativePathsAreRejected) {
  for (const char* ref : {"images/debian.qcow2", "./debian.qcow2", "../debian.qcow2", "~/d.qcow2"})
    expect_image_error(ref, std::string("\"") + ref + "\" is a relative path");
}

TEST(Image, SpacesAndControlCharacters) {
  expect_image_error("'debian 12'", "must not contain spaces or control characters");
  expect_image_error("\"debian\\t12\"", "must not contain spaces or control characters");
}

TEST(Image, Required) {
  auto r = load("network: {mode: nat}\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "image", 1, 1, "image must be set"));
  r = load("network: {mode: nat}\nimage:\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "image", 2, 1, "image must be set"));
  r = load("image:\nnetwork: {mode: nat}\n");
  EXPECT_TRUE(HasError(r, "image", 1, 1, "image must be set"));
  r = with_image("''");
  EXPECT_TRUE(HasError(r, "image", 2, 8, "image must be set"));
  r = with_image("{name: debian}");
  EXPECT_TRUE(HasError(r, "image", 2, 8, "expected a single value, got a mapping"));
}

TEST(Image, TemplatedImageWaitsForValues) {
  EXPECT_TRUE(Valid(with_image("${{ .var.image }}/x")));
  Variables values{{"var.image", "https://h"}, {"user.username", "a"}, {"space.name", "b"}};
  const auto r = load("network: {mode: nat}\nimage: ${{ .var.image }}/x.qcow2\n", values);
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->image.reference, "https://h/x.qcow2");
  EXPECT_EQ(r.spec->image.kind, ImageKind::Url);
}

// imageChecksum

const std::string kHex = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

// http://: only a checksum makes a plain-HTTP download trustworthy.

const std::string kNeedsChecksum =
    "an http:// image needs imageChecksum: plain HTTP can be altered in transit, so give the "
    "image's sha256:<64 hex digits> in imageChecksum to pin it (or use https://)";

TEST(security_spec_image, AnHttpImageWithoutImageChecksumIsRefusedAtTheImage) {
  for (const std::string url : {"http://mirror.local/img.qcow2", "HTTP://Mirror.Local/img.qcow2"}) {
    SCOPED_TRACE(url);
    const auto r = with_image(url);
    ASSERT_TRUE(ErrorCount(r, 1));
    EXPECT_TRUE(HasError(r, "image", 2, 8, kNeedsChecksum));
  }
  // Where the file says it: the image's own line and column, whatever the order.
  const auto r = load("imageChecksum:\nnetwork: {mode: nat}\n\nimage:   http://m/x.qcow2\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "image", 4, 10, kNeedsChecksum));
}

TEST(security_spec_image, AnHttpImageWithAChecksumIsPinnedAndValid) {
  const auto r = load(
      "network: {mode: nat}\nimage: http://mirror.local/img.qcow2\nimageChecksum: sha256:" + kHex +
      "\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->image.kind, ImageKind::Url);
  EXPECT_EQ(r.spec->image.reference, "http://mirror.local/img.qcow2");
  EXPECT_EQ(r.spec->image.sha256, kHex);
  // https:// needs none; a bad checksum is reported once, at imageChecksum.
  EXPECT_TRUE(Valid(with_image("https://mirror.local/img.qcow2")));
  const auto bad = load("network: {mode: nat}\nimage: http://m/x.qcow2\nimageChecksum: md5:00\n");
  ASSERT_TRUE(ErrorCount(bad, 1));
  EXPECT_TRUE(HasError(bad, "imageChecksum", 3, 16, "expected sha256:<64 hex digits>"));
}

TEST(security_spec_image, AChecksumThatWaitsForValuesIsCheckedWhenTheyCome) {
  const std::string text =
      "network: {mode: nat}\nimage: http://m/x.qcow2\nimageChecksum: ${{ .var.sum }}\n";
  EXPECT_TRUE(Valid(load(text)));  // validate without values: nothing to say yet
  Variables values{{"var.sum", "sha256:" + kHex}, {"user.username", "a"}, {"space.name", "b"}};
  EXPECT_TRUE(Valid(load(text, values)));
  // An image that expands to http:// needs the checksum as much as a written one.
  const auto r =
      load("network: {mode: nat}\nimage: ${{ .var.base }}/x.qcow2\n",
           Variables{{"var.base", "http://m"}, {"user.username", "a"}, {"space.name", "b"}});
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "image", 2, 8, kNeedsChecksum));
}

LoadResult with_checksum(const std::string& checksum) {
  return load("image: debian-12\nnetwork: {mode: nat}\nimageChecksum: " + checksum + "\n");
}

TEST(ImageChecksum, Sha256IsKeptInLowercase) {
  auto r = with_checksum("sha256:" + kHex);
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->image.sha256, kHex);
  std::string upper = kHex;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  r = with_checksum("sha256:" + upper);
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->image.sha256, kHex);
}

TEST(ImageChecksum, OptionalAndAbsentByDefault) {
  const auto r = load("image: debian-12\nnetwork: {mode: nat}\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_FALSE(r.spec->image.sha256);
}

TEST(ImageChecksum, WrongLength) {
  const auto r = with_checksum("sha256:abc");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "imageChecksum", 3, 16,
                       "expected sha256:<64 hex digits>, got 3 characters after sha256:"));
  EXPECT_TRUE(
      HasError(with_checksum("sha256:" + kHex + "0"), "imageChecksum", 3, 16, "got 65 characters"));
}

TEST(ImageChecksum, NotHex) {
  const auto r = with_checksum("sha256:" + kHex.substr(0, 63) + "g");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "imageChecksum", 3, 16, "not 0-9 or a-f"));
}

TEST(ImageChecksum, OtherAlgorithms) {
  for (const std::string& c :
       std::vector<std::string>{"md5:d41d8cd98f00b204e9800998ecf8427e", "SHA256:" + kHex, kHex}) {
    SCOPED_TRACE(c);
    const auto r = with_checksum(c);
    ASSERT_TRUE(ErrorCount(r, 1));
    EXPECT_TRUE(HasError(r, "imageChecksum", 3, 16, "expected sha256:<64 hex digits>"));
  }
}

}  // namespace
}  // namespace bowline::spec
