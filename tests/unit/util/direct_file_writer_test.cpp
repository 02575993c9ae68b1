#include "util/direct_file_writer.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <csignal>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace bowline::util {
namespace {

namespace fs = std::filesystem;

std::string pseudo_random(std::size_t size, unsigned seed) {
  std::mt19937 random(seed);
  std::string out(size, '\0');
  for (auto& c : out) c = static_cast<char>(random());
  return out;
}

std::string read_all(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream out;
  out << in.rdbuf();
  return out.str();
}

// The same bytes whatever the pieces: across buffer ends, a tail that is no whole block, a
// file that fits in one buffer; both on the disk's file system (O_DIRECT) and on tmpfs.
void writes_exactly_what_it_was_given(const fs::path& dir) {
  for (const std::size_t size :
       {std::size_t{0}, std::size_t{100}, std::size_t{4096}, std::size_t{(3 << 20) + 1234}}) {
    const auto data = pseudo_random(size, static_cast<unsigned>(size));
    const auto file = dir / ("out-" + std::to_string(size));
    DirectFileWriter out(file.string(), 0600, 1 << 20);  // a 1 MiB buffer: several flushes
    for (std::size_t at = 0; at < data.size();) {
      const auto n = std::min<std::size_t>(data.size() - at, 1 + (at * 7919) % 300000);
      out.write(std::string_view(data).substr(at, n));
      at += n;
    }
    out.finish(true);
    EXPECT_EQ(out.written(), size);
    EXPECT_EQ(read_all(file), data) << file;
    struct stat st {};
    ASSERT_EQ(::stat(file.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
  }
}

fs::path scratch(const char* under) {
  std::string pattern = std::string(under) + "/bowline-direct.XXXXXX";
  return fs::path(mkdtemp(pattern.data()));
}

TEST(DirectFileWriter, WritesExactlyWhatItWasGivenOnTheDisk) {
  const auto dir = scratch("/var/tmp");
  writes_exactly_what_it_was_given(dir);
  fs::remove_all(dir);
}

TEST(DirectFileWriter, WritesExactlyWhatItWasGivenOnTmpfs) {
  if (!fs::is_directory("/dev/shm")) GTEST_SKIP() << "no /dev/shm";
  const auto dir = scratch("/dev/shm");
  writes_exactly_what_it_was_given(dir);
  fs::remove_all(dir);
}

TEST(DirectFileWriter, AnExistingFileIsTruncatedAndMadePrivate) {
  const auto dir = scratch("/var/tmp");
  const auto file = dir / "old";
  std::ofstream(file) << std::string(10000, 'x');
  fs::permissions(file, fs::perms::all);
  DirectFileWriter out(file.string(), 0600);
  out.write("short");
  out.finish(false);
  EXPECT_EQ(read_all(file), "short");
  EXPECT_EQ(fs::status(file).permissions(), fs::perms::owner_read | fs::perms::owner_write);
  fs::remove_all(dir);
}

// A write the thread fails (here past the process's file size limit) reaches the caller, at a
// later write() or at finish(), naming the file.
TEST(DirectFileWriter, AWriteThatFailsOnTheThreadReachesTheCaller) {
  const auto dir = scratch("/var/tmp");
  const auto file = dir / "big";
  struct rlimit old {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 2 << 20;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string error;
  try {
    DirectFileWriter out(file.string(), 0600, 1 << 20);
    const std::string piece(1 << 20, 'x');
    for (int i = 0; i < 8; ++i) out.write(piece);
    out.finish(true);
  } catch (const std::system_error& e) {
    error = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(error.find(file.string()), std::string::npos) << error;
  EXPECT_NE(error.find("too large"), std::string::npos) << error;  // EFBIG
  EXPECT_LE(fs::file_size(file), std::uintmax_t{2} << 20);
  fs::remove_all(dir);
}

// A writer dropped before finish() (an export that failed) stops its thread and returns.
TEST(DirectFileWriter, AWriterDroppedBeforeFinishStopsItsThread) {
  const auto dir = scratch("/var/tmp");
  {
    DirectFileWriter out((dir / "dropped").string(), 0600, 1 << 20, 2);
    const std::string piece(1 << 20, 'y');
    for (int i = 0; i < 5; ++i) out.write(piece);
  }
  EXPECT_LE(fs::file_size(dir / "dropped"), std::uintmax_t{5} << 20);
  fs::remove_all(dir);
}

TEST(DirectFileWriter, ADirectoryThatCannotBeWrittenIsNamed) {
  try {
    DirectFileWriter out("/nonexistent-dir/x.tar", 0600);
    FAIL() << "opened a file in a missing directory";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.tar"), std::string::npos);
  }
}

}  // namespace
}  // namespace bowline::util
