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
  {
    ImageCache cache(options_);
    EXPECT_EQ(cache.resolve(image("plain", "debian.qcow2")), fs::path(base("debian.qcow2")));
    EXPECT_EQ(cache.resolve(image("plain", "debian.qcow2")), fs::path(base("debian.qcow2")));
  }
  ImageCache restarted(options_);  // the cache is on disk, not in memory
  EXPECT_EQ(restarted.resolve(image("plain", "debian.qcow2")), fs::path(base("debian.qcow2")));

  EXPECT_EQ(read_file(base("debian.qcow2")), bytes);
  const auto seen = requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0]["path"], "/plain/" + id_ + "/debian.qcow2");
  EXPECT_EQ(seen[0]["range"], "");
  EXPECT_EQ(seen[0]["status"], 200);
  EXPECT_THAT(list_dir(dir_.file("base")), ElementsAre("debian.qcow2", "debian.qcow2.sha256"));
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

TEST_F(Download, AnInterruptedTransferIsResumedByTheNextResolve) {
  const auto bytes = publish("big.qcow2", 3 * 1024 * 1024 + 5);
  options_.download.max_attempts = 1;
  ImageCache cache(options_);
  try {
    cache.resolve(image("drop-once", "big.qcow2", util::sha256_hex(bytes)));
    FAIL() << "no error";
  } catch (const ImageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the next try resumes"));
  }
  EXPECT_FALSE(fs::exists(base("big.qcow2")));
  const auto kept = fs::file_size(base("big.qcow2.part"));
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, bytes.size());
  EXPECT_EQ(read_file(base("big.qcow2.part")), bytes.substr(0, kept));

  EXPECT_EQ(cache.resolve(image("drop-once", "big.qcow2", util::sha256_hex(bytes))),
            fs::path(base("big.qcow2")));
  EXPECT_EQ(read_file(base("big.qcow2")), bytes);
  EXPECT_FALSE(fs::exists(base("big.qcow2.part")));
  const auto seen = requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1]["range"], "bytes=" + std::to_string(kept) + "-");
  EXPECT_EQ(seen[1]["status"], 206);
}

TEST_F(Download, AnInterruptedTransferIsResumedWithinOneResolve) {
  const auto bytes = publish("flaky.qcow2", 2 * 1024 * 1024);
  ImageCache cache(options_);
  Steps steps;
  cache.resolve(image("drop-once", "flaky.qcow2", util::sha256_hex(bytes)),
                [&](std::uint64_t done, std::uint64_t total) { steps.emplace_back(done, total); });
  EXPECT_EQ(read_file(base("flaky.qcow2")), bytes);
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
  write_file(base("whole.qcow2.part"), std::string(1000, 'x'));  // not even the right bytes
  ImageCache cache(options_);
  cache.resolve(image("norange", "whole.qcow2", util::sha256_hex(bytes)));
  EXPECT_EQ(read_file(base("whole.qcow2")), bytes);
  const auto seen = requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0]["range"], "bytes=1000-");
  EXPECT_EQ(seen[0]["status"], 200);
}

TEST_F(Download, ACompletePartialFileNeedsNoMoreBytes) {
  const auto bytes = publish("done.qcow2");
  fs::create_directories(dir_.file("base"));
  write_file(base("done.qcow2.part"), bytes);  // interrupted just before the rename
  ImageCache cache(options_);
  Steps steps;
  cache.resolve(image("plain", "done.qcow2", util::sha256_hex(bytes)),
                [&](std::uint64_t done, std::uint64_t total) { steps.emplace_back(done, total); });
  EXPECT_EQ(read_file(base("done.qcow2")), bytes);
  const auto seen = requests();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0]["status"], 416);
  EXPECT_THAT(
      steps, ElementsAre(std::make_pair(std::uint64_t{bytes.size()}, std::uint64_t{bytes.size()})));
}

TEST_F(Download, AStallFailsOnTheLowSpeedLimitAndKeepsWhatArrived) {
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
  EXPECT_GT(fs::file_size(base("slow.qcow2.part")), 0u);
  EXPECT_FALSE(fs::exists(base("slow.qcow2")));
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

  EXPECT_EQ(first_path, fs::path(base("shared.qcow2")));
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

}  // namespace
}  // namespace bowline::image::test
