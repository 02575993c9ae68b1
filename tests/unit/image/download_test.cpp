// ImageCache downloads against a real HTTPS server on 127.0.0.1 (https_server.py) with a
// self-signed certificate made by the test: caching, checksums, interruptions and resuming,
// servers that ignore Range, stalls, progress, concurrent callers, errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

#include "image/cache.hpp"
#include "image_test_support.hpp"
#include "util/hash.hpp"

namespace bowline::image::test {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using Steps = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

// One server for the whole suite (starting Python is the slow part); each test has its own
// cache directory and its own segment in the URLs, so requests are told apart and the
// server's per-path memory (drop-once) starts fresh for each test.
class Download : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    server_dir_ = new TempDir;
    fs::create_directories(server_dir_->file("root"));
    server_ = new HttpsServer(server_dir_->path(), server_dir_->file("root"));
  }
  static void TearDownTestSuite() {
    delete server_;
    delete server_dir_;
    server_ = nullptr;
    server_dir_ = nullptr;
  }
  void SetUp() override {
    static int tests = 0;
    id_ = "t" + std::to_string(++tests);
    options_.cloud_image_path = dir_.file("library");
    options_.base_image_path = dir_.file("base");
    options_.download.ca_file = server_->ca_file();
  }

  // Puts a file of `size` bytes on the server.
  std::string publish(const std::string& name, std::size_t size = 1024 * 1024 + 123,
                      unsigned seed = 7) {
    auto bytes = test_bytes(size, seed);
    write_file(served(name), bytes);
    fs::remove(served(name + ".waiting"));
    fs::remove(served(name + ".release"));
    return bytes;
  }
  std::string served(const std::string& name) const { return server_dir_->file("root/" + name); }
  std::string url(const std::string& mode, const std::string& name) const {
    return server_->url(mode, id_ + "/" + name);
  }
  spec::Image image(const std::string& mode, const std::string& name,
                    std::optional<std::string> sha256 = {}) const {
    return {spec::ImageKind::Url, url(mode, name), std::move(sha256)};
  }
  std::string base(const std::string& name) const { return dir_.file("base/" + name); }
  // Where the cache keeps this test's URL (a digest of the URL, then its file name).
  std::string cached(const std::string& mode, const std::string& name) const {
    return ImageCache(options_).cache_file(url(mode, name)).string();
  }
  std::string cached_name(const std::string& mode, const std::string& name) const {
    return fs::path(cached(mode, name)).filename().string();
  }
  // This test's requests.
  std::vector<nlohmann::json> requests() const {
    std::vector<nlohmann::json> out;
    for (auto& r : server_->requests())
      if (r["path"].get<std::string>().find("/" + id_ + "/") != std::string::npos) out.push_back(r);
    return out;
  }

  static TempDir* server_dir_;
  static HttpsServer* server_;
  std::string id_;
  TempDir dir_;
  CacheOptions options_;
};

TempDir* Download::server_dir_ = nullptr;
HttpsServer* Download::server_ = nullptr;

void wait_for_file(const std::string& path) {
  for (int i = 0; i < 500 && !fs::exists(path); ++i) std::this_thread::sleep_for(20ms);
  ASSERT_TRUE(fs::exists(path)) << path;
}

TEST_F(Download, DownloadsOnceThenUsesTheCache) {
  const auto bytes = publish("debian.qcow2");
  const auto file = cached("plain", "debian.qcow2");
  {
    ImageCache cache(options_);
    EXPECT_EQ(cache.resolve(image("plain", "debian.qcow2")), fs::path(file));
    EXPECT_EQ(cache.resolve(image("plain", "debian.qcow2")), fs::path(file));
  }
  ImageCache restarted(options_);  // the cache is on disk, not in memory
  EXPECT_EQ(restarted.resolve(image("plain", "debian.qcow2")), fs::path(file));

  EXPECT_EQ(read_file(file), bytes);
  EXPECT_EQ(read_file(file + ".url"), url("plain", "debian.qcow2") + "\n");
  const auto seen = requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0]["path"], "/plain/" + id_ + "/debian.qcow2");
  EXPECT_EQ(seen[0]["range"], "");
  EXPECT_EQ(seen[0]["status"], 200);
  const auto name = cached_name("plain", "debian.qcow2");
  EXPECT_THAT(list_dir(dir_.file("base")), ElementsAre(name, name + ".sha256", name + ".url"));
}

TEST_F(Download, AMatchingChecksumIsAccepted) {
  const auto bytes = publish("ok.qcow2");
  ImageCache cache(options_);
  const auto file = cache.resolve(image("plain", "ok.qcow2", util::sha256_hex(bytes)));
  EXPECT_EQ(read_file(file), bytes);
}

TEST_F(Download, AChecksumMismatchNamesBothDigestsAndRemovesTheDownload) {
  const auto bytes = publish("bad.qcow2");
  const std::string expected(64, 'c');
  ImageCache cache(options_);
  try {
    cache.resolve(image("plain", "bad.qcow2", expected));
    FAIL() << "no error";
  } catch (const ImageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected sha256:" + expected));
    EXPECT_THAT(e.what(), HasSubstr("got sha256:" + util::sha256_hex(bytes)));
    EXPECT_THAT(e.what(), HasSubstr(url("plain", "bad.qcow2")));
  }
  EXPECT_THAT(list_dir(dir_.file("base")), ElementsAre());
}

TEST_F(Download, AnInterruptedTransferIsResumedWithinOneResolve) {
  const auto bytes = publish("flaky.qcow2", 2 * 1024 * 1024);
  ImageCache cache(options_);
  Steps steps;
  cache.resolve(image("drop-once", "flaky.qcow2", util::sha256_hex(bytes)),
                [&](std::uint64_t done, std::uint64_t total) { steps.emplace_back(done, total); });
  EXPECT_EQ(read_file(cached("drop-once", "flaky.qcow2")), bytes);
  const auto seen = requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0]["range"], "");
  EXPECT_THAT(seen[1]["range"].get<std::string>(), HasSubstr("bytes="));
  EXPECT_EQ(seen[1]["status"], 206);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.back(), std::make_pair(std::uint64_t{bytes.size()}, std::uint64_t{bytes.size()}));
}

TEST_F(Download, AServerThatIgnoresRangeIsReadFromTheStartAgain) {
  const auto bytes = publish("whole.qcow2");
  fs::create_directories(dir_.file("base"));
  const auto file = cached("norange", "whole.qcow2");
  write_file(file + ".part", std::string(1000, 'x'));  // not even the right bytes
  ImageCache cache(options_);
  cache.resolve(image("norange", "whole.qcow2", util::sha256_hex(bytes)));
  EXPECT_EQ(read_file(file), bytes);
  const auto seen = requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0]["range"], "bytes=1000-");
  EXPECT_EQ(seen[0]["status"], 200);
}

TEST_F(Download, ACompletePartialFileNeedsNoMoreBytes) {
  const auto bytes = publish("done.qcow2");
  fs::create_directories(dir_.file("base"));
  const auto file = cached("plain", "done.qcow2");
  write_file(file + ".part", bytes);  // interrupted just before the rename
  ImageCache cache(options_);
  Steps steps;
  cache.resolve(image("plain", "done.qcow2", util::sha256_hex(bytes)),
                [&](std::uint64_t done, std::uint64_t total) { steps.emplace_back(done, total); });
  EXPECT_EQ(read_file(file), bytes);
  const auto seen = requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0]["status"], 416);
  EXPECT_THAT(
      steps, ElementsAre(std::make_pair(std::uint64_t{bytes.size()}, std::uint64_t{bytes.size()})));
}

TEST_F(Download, AStallFailsOnTheLowSpeedLimitAndLeavesNothing) {
  // Small enough that the bytes before the stall do not lift the speed curl averages over
  // its last few seconds above the limit.
  publish("slow.qcow2", 2000);
  options_.download.low_speed_limit = 1000;
  options_.download.low_speed_time = 1s;
  options_.download.max_attempts = 1;
  ImageCache cache(options_);
  const auto start = std::chrono::steady_clock::now();
  try {
    cache.resolve(image("stall", "slow.qcow2"));
    FAIL() << "no error";
  } catch (const ImageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("stalled"));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
  EXPECT_FALSE(fs::exists(cached("stall", "slow.qcow2") + ".part"));
  EXPECT_FALSE(fs::exists(cached("stall", "slow.qcow2")));
}

TEST_F(Download, ProgressRisesMonotonicallyToTheTotal) {
  const auto bytes = publish("progress.qcow2", 5 * 1024 * 1024 + 1);
  ImageCache cache(options_);
  Steps steps;
  cache.resolve(image("plain", "progress.qcow2"),
                [&](std::uint64_t done, std::uint64_t total) { steps.emplace_back(done, total); });
  ASSERT_GE(steps.size(), 3u);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].second, bytes.size()) << i;
    EXPECT_LE(steps[i].first, bytes.size()) << i;
    if (i > 0) {
      EXPECT_GT(steps[i].first, steps[i - 1].first) << i;
    }
  }
  EXPECT_EQ(steps.back().first, bytes.size());
}

TEST_F(Download, ConcurrentResolvesOfOneUrlShareOneDownload) {
  const auto bytes = publish("shared.qcow2");
  ImageCache cache(options_);
  fs::path first_path, second_path;
  Steps first_steps, second_steps;
  std::thread first([&] {
    first_path = cache.resolve(image("hold", "shared.qcow2"), [&](auto done, auto total) {
      first_steps.emplace_back(done, total);
    });
  });
  wait_for_file(served("shared.qcow2.waiting"));  // the first request is at the server
  std::thread second([&] {
    second_path = cache.resolve(image("hold", "shared.qcow2"), [&](auto done, auto total) {
      second_steps.emplace_back(done, total);
    });
  });
  std::this_thread::sleep_for(500ms);  // time enough for a second request, were one made
  write_file(served("shared.qcow2.release"), "");
  first.join();
  second.join();

  EXPECT_EQ(first_path, fs::path(cached("hold", "shared.qcow2")));
  EXPECT_EQ(second_path, first_path);
  EXPECT_EQ(read_file(first_path), bytes);
  EXPECT_EQ(requests().size(), 1u);
  // The waiter saw the shared download's progress, so it waited for it rather than finding
  // a finished file.
  ASSERT_FALSE(second_steps.empty());
  EXPECT_EQ(second_steps.back().first, bytes.size());
  ASSERT_FALSE(first_steps.empty());
  EXPECT_EQ(first_steps.back().first, bytes.size());
}

TEST_F(Download, ConcurrentResolvesShareTheFirstOnesError) {
  publish("wrong.qcow2");
  ImageCache cache(options_);
  const std::string expected(64, 'e');
  std::string first_error, second_error;
  auto attempt = [&](std::string& error) {
    try {
      cache.resolve(image("hold", "wrong.qcow2", expected));
    } catch (const ImageError& e) {
      error = e.what();
    }
  };
  std::thread first(attempt, std::ref(first_error));
  wait_for_file(served("wrong.qcow2.waiting"));
  std::thread second(attempt, std::ref(second_error));
  std::this_thread::sleep_for(500ms);
  write_file(served("wrong.qcow2.release"), "");
  first.join();
  second.join();

  EXPECT_THAT(first_error, HasSubstr("expected sha256:" + expected));
  EXPECT_EQ(second_error, first_error);
  EXPECT_EQ(requests().size(), 1u);
  EXPECT_THAT(list_dir(dir_.file("base")), ElementsAre());
}

TEST_F(Download, ANotFoundIsAClearErrorAndLeavesNothing) {
  ImageCache cache(options_);
  try {
    cache.resolve(image("plain", "missing.qcow2"));
    FAIL() << "no error";
  } catch (const ImageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("downloading " + url("plain", "missing.qcow2")));
    EXPECT_THAT(e.what(), HasSubstr("404 Not Found"));
  }
  EXPECT_THAT(list_dir(dir_.file("base")), ElementsAre());
  EXPECT_EQ(requests().size(), 1u);
}

TEST_F(Download, AServerOutsideTheTrustedAuthoritiesIsRefused) {
  publish("untrusted.qcow2");
  options_.download.ca_file.clear();  // the system's store, which never saw our certificate
  ImageCache cache(options_);
  try {
    cache.resolve(image("plain", "untrusted.qcow2"));
    FAIL() << "no error";
  } catch (const ImageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("certificate"));
  }
  EXPECT_THAT(list_dir(dir_.file("base")), ElementsAre());
  EXPECT_TRUE(requests().empty());
}

TEST_F(Download, APlainHttpUrlIsFetchedAsWritten) {
  const auto bytes = publish("plain.qcow2");
  ImageCache cache(options_);
  const spec::Image pinned{spec::ImageKind::Url, server_->http_url("plain", id_ + "/plain.qcow2"),
                           util::sha256_hex(bytes)};
  EXPECT_EQ(read_file(cache.resolve(pinned)), bytes);
  const auto seen = requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0]["scheme"], "http");
}

// ---- Images bowline did not make ----------------------------------------------------------

using security_image = Download;

TEST_F(security_image, ARedirectToPlainHttpIsRefusedAndNamesWhereItLed) {
  publish("hop.qcow2");
  ImageCache cache(options_);
  const auto target = server_->http_url("plain", id_ + "/hop.qcow2");
  try {
    cache.resolve(image("redirect-http", "hop.qcow2"));
    FAIL() << "the redirect to http:// was followed";
  } catch (const ImageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "downloading " + url("redirect-http", "hop.qcow2") + ": the server redirected to " +
                  target +
                  ", which is not https://: bowline follows redirects only to https:// (a "
                  "plain-HTTP hop could be altered in transit); use the final https:// URL in "
                  "the template");
  }
  EXPECT_THAT(list_dir(dir_.file("base")), ElementsAre());
  const auto seen = requests();
  ASSERT_EQ(seen.size(), 1u);  // the redirect; the plain-HTTP server was never asked
  EXPECT_EQ(seen[0]["status"], 302);
}

TEST_F(security_image, ARedirectThatStaysOnHttpsIsFollowed) {
  const auto bytes = publish("moved.qcow2");
  ImageCache cache(options_);
  EXPECT_EQ(read_file(cache.resolve(image("redirect-https", "moved.qcow2"))), bytes);
  const auto seen = requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0]["status"], 302);
  EXPECT_EQ(seen[1]["path"], "/plain/" + id_ + "/moved.qcow2");
  EXPECT_EQ(seen[1]["scheme"], "https");
}

TEST_F(security_image, AContentLengthOverTheLimitIsRefusedBeforeAByteIsWritten) {
  const auto bytes = publish("huge.qcow2", 1024 * 1024 + 123);
  options_.download.max_size = 512 * 1024;
  ImageCache cache(options_);
  Steps steps;
  try {
    cache.resolve(image("plain", "huge.qcow2"), [&](std::uint64_t done, std::uint64_t total) {
      steps.emplace_back(done, total);
    });
    FAIL() << "no error";
  } catch (const ImageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "downloading " + url("plain", "huge.qcow2") + ": the image is " +
                  std::to_string(bytes.size()) +
                  " bytes, larger than server.kvm.max_image_size (512Ki) allows; nothing was "
                  "kept. Raise server.kvm.max_image_size to download it");
  }
  EXPECT_TRUE(steps.empty());  // no byte arrived in the file
  EXPECT_THAT(list_dir(dir_.file("base")), ElementsAre());
  EXPECT_EQ(requests().size(), 1u);  // and it is not tried again
}

TEST_F(security_image, AResumedDownloadIsJudgedByTheWholeFilesSize) {
  const auto bytes = publish("resumed.qcow2", 1024 * 1024);
  options_.download.max_size = 512 * 1024;
  fs::create_directories(dir_.file("base"));
  const auto part = cached("plain", "resumed.qcow2") + ".part";
  write_file(part, bytes.substr(0, 1000));  // from before the limit was lowered
  ImageCache cache(options_);
  try {
    cache.resolve(image("plain", "resumed.qcow2"));
    FAIL() << "no error";
  } catch (const ImageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the image is 1048576 bytes, larger than "
                                    "server.kvm.max_image_size (512Ki) allows"));
  }
  EXPECT_FALSE(fs::exists(part));
  const auto seen = requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0]["range"], "bytes=1000-");
  EXPECT_EQ(seen[0]["status"], 206);
}

TEST_F(security_image, ABodyWithoutALengthIsCutOffAtTheLimitAndRemoved) {
  publish("endless.qcow2", 1024 * 1024 + 123);
  options_.download.max_size = 300 * 1024;
  ImageCache cache(options_);
  std::uint64_t most = 0;
  try {
    cache.resolve(image("nolength", "endless.qcow2"),
                  [&](std::uint64_t done, std::uint64_t) { most = std::max(most, done); });
    FAIL() << "no error";
  } catch (const ImageError& e) {
    const std::string message = e.what();
    EXPECT_THAT(message, HasSubstr("downloading " + url("nolength", "endless.qcow2") +
                                   ": the image grew past server.kvm.max_image_size (300Ki) at "));
    EXPECT_THAT(message, HasSubstr(" bytes, more than its headers announced; the partial "
                                   "download was removed. Raise server.kvm.max_image_size to "
                                   "download it"));
  }
  EXPECT_LE(most, 300u * 1024);
  EXPECT_THAT(list_dir(dir_.file("base")), ElementsAre());
  EXPECT_EQ(requests().size(), 1u);
}

TEST_F(security_image, AnotherUrlWithTheSameFileNameGetsItsOwnDownload) {
  fs::create_directories(served(id_ + "/a"));
  fs::create_directories(served(id_ + "/b"));
  const auto a = test_bytes(100000, 1), b = test_bytes(100000, 2);
  write_file(served(id_ + "/a/debian.qcow2"), a);
  write_file(served(id_ + "/b/debian.qcow2"), b);
  ImageCache cache(options_);
  const auto from_a = cache.resolve(image("plain", "a/debian.qcow2"));
  const auto from_b = cache.resolve(image("plain", "b/debian.qcow2"));
  EXPECT_NE(from_a, from_b);
  EXPECT_EQ(read_file(from_a), a);
  EXPECT_EQ(read_file(from_b), b);
  EXPECT_EQ(from_b.filename().string().substr(17), "debian.qcow2");
  // Each is cached for its own URL: no more requests, and a checksum of the other's bytes
  // does not make them interchangeable.
  EXPECT_EQ(cache.resolve(image("plain", "a/debian.qcow2")), from_a);
  EXPECT_EQ(read_file(cache.resolve(image("plain", "b/debian.qcow2", util::sha256_hex(b)))), b);
  EXPECT_THROW(cache.resolve(image("plain", "a/debian.qcow2", util::sha256_hex(b))), ImageError);
  EXPECT_EQ(requests().size(), 2u);
}

TEST_F(security_image, AnOldCacheFileIsUsedOnlyWhenTheChecksumVouchesForIt) {
  // The old layout: named after the last path segment, from whichever URL had that name.
  fs::create_directories(dir_.file("base"));
  const auto old = test_bytes(100000, 3);
  write_file(base("old.qcow2"), old);
  const auto bytes = publish("old.qcow2", 100000, 4);
  ImageCache cache(options_);
  // Without a checksum nothing says it is this URL's file: this URL's own is downloaded.
  const auto own = cache.resolve(image("plain", "old.qcow2"));
  EXPECT_EQ(own, fs::path(cached("plain", "old.qcow2")));
  EXPECT_EQ(read_file(own), bytes);
  EXPECT_EQ(requests().size(), 1u);
  // With the old file's checksum it is used as it is, without a request.
  EXPECT_EQ(cache.resolve(image("norange", "old.qcow2", util::sha256_hex(old))),
            fs::path(base("old.qcow2")));
  EXPECT_EQ(requests().size(), 1u);
  EXPECT_EQ(read_file(base("old.qcow2")), old);  // and never replaced
}

// A download that fails for good leaves nothing behind: no quota counts a partial file.
TEST_F(security_image, AFailedDownloadLeavesNoPartialFile) {
  const auto bytes = publish("big.qcow2", 3 * 1024 * 1024 + 5);
  options_.download.max_attempts = 1;
  ImageCache cache(options_);
  try {
    cache.resolve(image("drop-once", "big.qcow2", util::sha256_hex(bytes)));
    FAIL() << "no error";
  } catch (const ImageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("what had arrived is removed"));
    EXPECT_THAT(e.what(), ::testing::Not(HasSubstr("the next try resumes")));
  }
  const auto file = cached("drop-once", "big.qcow2");
  EXPECT_FALSE(fs::exists(file));
  EXPECT_FALSE(fs::exists(file + ".part"));
  // The next resolve starts again, from the first byte.
  EXPECT_EQ(cache.resolve(image("drop-once", "big.qcow2", util::sha256_hex(bytes))),
            fs::path(file));
  EXPECT_EQ(read_file(file), bytes);
  const auto seen = requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1]["range"], "");
}

}  // namespace
}  // namespace bowline::image::test
