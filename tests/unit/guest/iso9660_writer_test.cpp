// Tests for the ISO 9660 writer, using real readers as oracles: isoinfo (genisoimage) reads
// both the primary and the Joliet tree, xorriso (libisofs) extracts the image to a directory.
#include "guest/iso9660_writer.hpp"
#include "../common/scratch_files.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace bowline::guest {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAreArray;

// --- Helpers -------------------------------------------------------------------------------

using test_support::TempDir;

struct Output {
  int status = -1;
  std::string out;
};

// Runs a shell command, capturing its stdout as bytes.
Output run(const std::string& command) {
  Output result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// "" if equal, else a short description of how `got` differs (for readable failures).
std::string difference(const std::string& got, const std::string& want) {
  if (got == want) return "";
  const auto at = std::mismatch(got.begin(), got.end(), want.begin(), want.end());
  return "got " + std::to_string(got.size()) + " bytes, want " + std::to_string(want.size()) +
         "; first difference at byte " + std::to_string(at.first - got.begin());
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

// Paths isoinfo lists for the Joliet tree (joliet) or the primary tree.
std::vector<std::string> isoinfo_paths(const fs::path& iso, bool joliet) {
  const Output listed = run(std::string("isoinfo ") + (joliet ? "-J " : "") + "-f -i " +
                            quote(iso.string()) + " 2>&1");
  EXPECT_EQ(listed.status, 0) << listed.out;
  return lines(listed.out);
}

// Extracts each of `paths` with `isoinfo [-J] -x` (one shell for all, output to files) and
// returns the contents in the same order.
std::vector<std::string> isoinfo_extract_all(const fs::path& iso,
                                             const std::vector<std::string>& paths, bool joliet) {
  TempDir out;
  std::string script = "set -e; ";
  for (std::size_t i = 0; i < paths.size(); ++i)
    script += std::string("isoinfo ") + (joliet ? "-J " : "") + "-x " + quote(paths[i]) + " -i " +
              quote(iso.string()) + " > " + quote((out.path() / std::to_string(i)).string()) + "; ";
  const Output extracted = run(script);
  EXPECT_EQ(extracted.status, 0) << script;
  std::vector<std::string> contents;
  for (std::size_t i = 0; i < paths.size(); ++i)
    contents.push_back(read_bytes(out.path() / std::to_string(i)));
  return contents;
}

std::string isoinfo_extract(const fs::path& iso, const std::string& path, bool joliet) {
  return isoinfo_extract_all(iso, {path}, joliet).front();
}

std::vector<std::string> names_of(const std::vector<IsoFile>& files) {
  std::vector<std::string> names;
  for (const auto& file : files) names.push_back(file.name);
  return names;
}

std::vector<std::string> rooted(const std::vector<std::string>& names) {
  std::vector<std::string> paths;
  for (const auto& name : names) paths.push_back("/" + name);
  return paths;
}

// Checks the primary (non-Joliet) tree: one level-2 d-character name per file, and the
// contents behind those names are exactly the files' contents.
void expect_primary_tree_holds(const fs::path& iso, const std::vector<IsoFile>& files) {
  static const std::regex kLevel2(R"(/[A-Z0-9_]*\.[A-Z0-9_]*;1)");
  const auto paths = isoinfo_paths(iso, false);
  ASSERT_EQ(paths.size(), files.size());
  EXPECT_EQ(std::set<std::string>(paths.begin(), paths.end()).size(), paths.size());
  for (const auto& path : paths) {
    EXPECT_TRUE(std::regex_match(path, kLevel2)) << path;
    EXPECT_LE(path.size(), 1 + 30 + 3) << path;
  }
  std::vector<std::string> expected;
  for (const auto& file : files) expected.push_back(file.content);
  EXPECT_THAT(isoinfo_extract_all(iso, paths, false), UnorderedElementsAreArray(expected));
}

// Checks the Joliet tree with isoinfo: exactly the files' names, each with its exact bytes.
void expect_joliet_tree_holds(const fs::path& iso, const std::vector<IsoFile>& files) {
  const auto paths = rooted(names_of(files));
  EXPECT_THAT(isoinfo_paths(iso, true), UnorderedElementsAreArray(paths));
  const auto contents = isoinfo_extract_all(iso, paths, true);
  for (std::size_t i = 0; i < files.size(); ++i)
    EXPECT_EQ(difference(contents[i], files[i].content), "") << files[i].name << " via isoinfo -J";
}

// Extracts the image with xorriso (libisofs) and compares names and contents byte for byte.
void expect_xorriso_extracts(const fs::path& iso, const std::vector<IsoFile>& files) {
  TempDir dir;
  const fs::path out = dir.path() / "out";
  const Output extracted = run("xorriso -indev " + quote(iso.string()) +
                               " -toc -osirrox on -extract / " + quote(out.string()) + " 2>&1");
  ASSERT_EQ(extracted.status, 0) << extracted.out;
  EXPECT_THAT(extracted.out, HasSubstr("ISO loaded   : Joliet")) << extracted.out;
  for (const char* problem : {"WARNING", "SORRY", "FAILURE", "FATAL"})
    EXPECT_THAT(extracted.out, ::testing::Not(HasSubstr(problem))) << extracted.out;

  std::vector<std::string> seen;
  for (const auto& entry : fs::directory_iterator(out)) seen.push_back(entry.path().filename());
  EXPECT_THAT(seen, UnorderedElementsAreArray(names_of(files)));
  for (const auto& file : files)
    EXPECT_EQ(difference(read_bytes(out / file.name), file.content), "")
        << file.name << " via xorriso";
}

std::uint32_t le32_at(const std::string& image, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i)
    value |= static_cast<std::uint32_t>(static_cast<unsigned char>(image[at + i])) << (8 * i);
  return value;
}

std::uint32_t be32_at(const std::string& image, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i)
    value = (value << 8) | static_cast<unsigned char>(image[at + i]);
  return value;
}

std::vector<IsoFile> seed_files() {
  return {
      {"user-data", "#cloud-config\nhostname: web-1\nusers:\n  - name: ops\n"},
      {"meta-data", "instance-id: web-1\nlocal-hostname: web-1\n"},
      {"network-config", "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n"},
  };
}

// A cloud-init seed written to a temp file.
class SeedImage : public ::testing::Test {
 protected:
  void SetUp() override {
    image_ = write_iso9660("cidata", files_);
    write_bytes(iso_, image_);
  }

  std::vector<IsoFile> files_ = seed_files();
  TempDir dir_;
  fs::path iso_ = dir_.path() / "seed.iso";
  std::string image_;
};

// --- Real readers --------------------------------------------------------------------------

TEST_F(SeedImage, IsoinfoSeesVolumeIdJolietAndSize) {
  const Output info = run("isoinfo -d -i " + quote(iso_.string()) + " 2>&1");
  ASSERT_EQ(info.status, 0) << info.out;
  EXPECT_THAT(info.out, HasSubstr("Volume id: cidata\n"));
  EXPECT_THAT(info.out, HasSubstr("Joliet with UCS level 3 found"));
  EXPECT_THAT(info.out, HasSubstr("Logical block size is: 2048\n"));
  EXPECT_THAT(info.out,
              HasSubstr("Volume size is: " + std::to_string(image_.size() / 2048) + "\n"));
}

// cloud-init finds the seed by its label through blkid (util-linux).
TEST_F(SeedImage, BlkidSeesTheCidataLabel) {
  if (run("command -v blkid").status != 0) GTEST_SKIP() << "blkid is not installed";
  const Output label = run("blkid -p -o value -s LABEL " + quote(iso_.string()));
  EXPECT_EQ(label.out, "cidata\n");
}

// Small guests (busybox's findfs, as in our test guest) read the first 68 KiB of a device at
// once and see no file system at all when the image is shorter: the writer pads it.
TEST_F(SeedImage, BusyboxFindfsFindsTheLabelOnALoopDevice) {
  if (geteuid() != 0 || run("command -v busybox losetup").status != 0)
    GTEST_SKIP() << "needs root, busybox and losetup";
  const Output loop = run("losetup -f --show " + quote(iso_.string()));
  if (loop.status != 0) GTEST_SKIP() << "no loop device available";
  std::string device = loop.out.substr(0, loop.out.find('\n'));
  const Output found = run("busybox findfs LABEL=cidata");
  run("losetup -d " + quote(device));
  EXPECT_EQ(found.status, 0);
  EXPECT_EQ(found.out, device + "\n");
  EXPECT_GE(image_.size(), 150u * 2048);
}

TEST_F(SeedImage, IsoinfoReadsJolietNamesAndExactBytes) {
  expect_joliet_tree_holds(iso_, files_);
  EXPECT_EQ(isoinfo_extract(iso_, "/user-data", true), files_[0].content);
}

TEST_F(SeedImage, PrimaryTreeHasUppercaseLevel2Names) {
  EXPECT_THAT(isoinfo_paths(iso_, false),
              UnorderedElementsAreArray(std::vector<std::string>{"/USER_DATA.;1", "/META_DATA.;1",
                                                                 "/NETWORK_CONFIG.;1"}));
  EXPECT_EQ(isoinfo_extract(iso_, "/USER_DATA.;1", false), files_[0].content);
  expect_primary_tree_holds(iso_, files_);
}

TEST_F(SeedImage, XorrisoExtractsSameNamesAndContents) {
  expect_xorriso_extracts(iso_, files_);
}

TEST(Iso9660Writer, EmptyAndSectorBoundaryFilesRoundTrip) {
  const std::vector<IsoFile> files = {
      {"empty", ""},
      {"one", "x"},
      {"sector", std::string(2048, 's')},
      {"sector-plus-one", std::string(2049, 'p')},
      {"also-empty", ""},
  };
  TempDir dir;
  const fs::path iso = dir.path() / "x.iso";
  write_bytes(iso, write_iso9660("cidata", files));
  expect_joliet_tree_holds(iso, files);
  expect_primary_tree_holds(iso, files);
  expect_xorriso_extracts(iso, files);
}

TEST(Iso9660Writer, OnlyEmptyFilesAndNoFilesGiveValidImages) {
  for (const auto& files : {std::vector<IsoFile>{}, std::vector<IsoFile>{{"meta-data", ""}}}) {
    TempDir dir;
    const fs::path iso = dir.path() / "x.iso";
    const std::string image = write_iso9660("cidata", files);
    write_bytes(iso, image);
    // The volume space size covers the whole image (with the zero sector that empty files
    // point at, when there is no other data).
    EXPECT_EQ(le32_at(image, 16 * 2048 + 80) * 2048u, image.size());
    const Output info = run("isoinfo -d -i " + quote(iso.string()) + " 2>&1");
    EXPECT_THAT(info.out, HasSubstr("Joliet with UCS level 3 found"));
    expect_joliet_tree_holds(iso, files);
    expect_xorriso_extracts(iso, files);
  }
}

TEST(Iso9660Writer, NamesThatCollideInThePrimaryTreeStayDistinct) {
  // All of these map to USER_DATA (or share the first 30 characters) in the primary tree.
  const std::string long_a = std::string(40, 'a') + "-1";
  const std::string long_b = std::string(40, 'a') + "-2";
  const std::vector<IsoFile> files = {
      {"user-data", "1"},   {"user_data", "2"},
      {"USER-DATA_1", "3"}, {"user.data.", "x"},
      {long_a, "5"},        {long_b, "6"},
      {".hidden", "7"},     {"a.b.c.verylongextension", "8"},
  };
  // "user.data." is rejected (trailing dot); the rest must work.
  EXPECT_THROW(write_iso9660("cidata", files), std::invalid_argument);
  std::vector<IsoFile> valid = files;
  valid.erase(valid.begin() + 3);

  TempDir dir;
  const fs::path iso = dir.path() / "x.iso";
  write_bytes(iso, write_iso9660("cidata", valid));
  expect_joliet_tree_holds(iso, valid);
  expect_primary_tree_holds(iso, valid);
  expect_xorriso_extracts(iso, valid);
}

// Found by tests/fuzz/iso9660_fuzz (seed long_extension_no_base): a name whose extension
// alone is over 30 characters had its short base padded with NUL bytes up to the room left, so
// the primary tree held "\0\0...\0.CCCCCCCC;1", which no d-character reader expects.
TEST(Iso9660Writer, ALongExtensionShortensWithoutPaddingTheBase) {
  const std::vector<IsoFile> files = {
      {"." + std::string(40, 'c'), "1"},
      {"a." + std::string(40, 'b'), "2"},
      {"ab." + std::string(40, 'b'), "3"},
  };
  TempDir dir;
  const fs::path iso = dir.path() / "x.iso";
  write_bytes(iso, write_iso9660("cidata", files));
  EXPECT_THAT(isoinfo_paths(iso, false), UnorderedElementsAreArray(std::vector<std::string>{
                                             "/.CCCCCCCC;1", "/A.BBBBBBBB;1", "/AB.BBBBBBBB;1"}));
  expect_primary_tree_holds(iso, files);
  expect_joliet_tree_holds(iso, files);
}

TEST(Iso9660Writer, DirectoriesSpanningSeveralSectors) {
  // 40 names of 64 characters: the Joliet directory needs 2 * 34 + 40 * 162 bytes, 4 sectors,
  // and records must not straddle sector boundaries.
  std::vector<IsoFile> files;
  for (int i = 0; i < 40; ++i) {
    const std::string number = std::to_string(i);
    files.push_back({std::string(64 - number.size(), 'n') + number, "content " + number});
  }
  TempDir dir;
  const fs::path iso = dir.path() / "x.iso";
  write_bytes(iso, write_iso9660("cidata", files));
  expect_joliet_tree_holds(iso, files);
  expect_primary_tree_holds(iso, files);
  expect_xorriso_extracts(iso, files);
}

TEST(Iso9660Writer, LargestFileAndLongestNameRoundTrip) {
  std::string big(kIsoMaxFileSize, '\0');
  std::mt19937 random(7);
  for (auto& c : big) c = static_cast<char>(random());
  const std::vector<IsoFile> files = {{std::string(kIsoMaxNameLength, 'z'), big}};
  TempDir dir;
  const fs::path iso = dir.path() / "x.iso";
  write_bytes(iso, write_iso9660("cidata", files));
  EXPECT_EQ(difference(isoinfo_extract(iso, "/" + files[0].name, true), big), "");
  expect_xorriso_extracts(iso, files);
}

// --- Structure and determinism -------------------------------------------------------------

TEST_F(SeedImage, DescriptorsSitWhereTheStandardPutsThem) {
  ASSERT_EQ(image_.size() % 2048, 0u);
  const std::size_t sectors = image_.size() / 2048;
  EXPECT_EQ(image_.substr(0, 16 * 2048), std::string(16 * 2048, '\0'));  // system area
  const std::size_t pvd = 16 * 2048, svd = 17 * 2048, end = 18 * 2048;
  // Descriptor type (1 primary, 2 supplementary, 255 terminator), "CD001", version 1.
  EXPECT_EQ(image_.substr(pvd, 7), "\1CD001\1");
  EXPECT_EQ(image_.substr(svd, 7), "\2CD001\1");
  EXPECT_EQ(image_.substr(end, 7), "\377CD001\1");
  EXPECT_EQ(image_.substr(svd + 88, 3), "%/E");
  EXPECT_EQ(image_.substr(pvd + 40, 8), "cidata  ");
  EXPECT_EQ(image_.substr(svd + 40, 14), std::string("\0c\0i\0d\0a\0t\0a\0 ", 14));
  for (const std::size_t d : {pvd, svd}) {
    EXPECT_EQ(le32_at(image_, d + 80), sectors);  // volume space size, both byte orders
    EXPECT_EQ(be32_at(image_, d + 84), sectors);
    EXPECT_EQ(image_.substr(d + 813, 17), std::string("2000010100000000\0", 17));
  }
}

TEST(Iso9660Writer, IsDeterministicAndIgnoresInputOrder) {
  const auto files = seed_files();
  auto reversed = files;
  std::reverse(reversed.begin(), reversed.end());
  const std::string first = write_iso9660("cidata", files);
  EXPECT_TRUE(first == write_iso9660("cidata", files));
  EXPECT_TRUE(first == write_iso9660("cidata", reversed));
  auto changed = files;
  changed[0].content += "\n";
  EXPECT_FALSE(first == write_iso9660("cidata", changed));
}

// --- Invalid input -------------------------------------------------------------------------

TEST(Iso9660Writer, RejectsBadVolumeIds) {
  for (const std::string id : {"", "ci data", "cidata/", "0123456789abcdefg", "\xc3\xa9t\xc3\xa9"})
    EXPECT_THROW(write_iso9660(id, {}), std::invalid_argument) << id;
  EXPECT_NO_THROW(write_iso9660("0123456789abcdef", {}));
  EXPECT_NO_THROW(write_iso9660("CI-DATA_1.0", {}));
}

TEST(Iso9660Writer, RejectsBadFileNames) {
  const std::vector<std::string> bad = {
      "",    ".",   "..",          "user-data.",         "a/b",
      "a b", "a;1", "caf\xc3\xa9", std::string(1, '\0'), std::string(kIsoMaxNameLength + 1, 'a')};
  for (const auto& name : bad)
    EXPECT_THROW(write_iso9660("cidata", {{name, "x"}}), std::invalid_argument) << name;
}

TEST(Iso9660Writer, ErrorMessagesNameTheProblem) {
  try {
    write_iso9660("cidata", {{"user data", ""}});
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("\"user data\""));
    EXPECT_THAT(e.what(), HasSubstr("[A-Za-z0-9._-]"));
  }
  try {
    write_iso9660("cidata", {{"user-data", "a"}, {"meta-data", ""}, {"user-data", "b"}});
    FAIL() << "expected an exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("duplicate"));
    EXPECT_THAT(e.what(), HasSubstr("user-data"));
  }
}

TEST(Iso9660Writer, RejectsDuplicatesIncludingCaseOnlyDifferences) {
  EXPECT_THROW(write_iso9660("cidata", {{"a", "1"}, {"a", "2"}}), std::invalid_argument);
  EXPECT_THROW(write_iso9660("cidata", {{"user-data", ""}, {"User-Data", ""}}),
               std::invalid_argument);
}

TEST(Iso9660Writer, RejectsFilesOverTheSizeLimit) {
  EXPECT_THROW(write_iso9660("cidata", {{"big", std::string(kIsoMaxFileSize + 1, 'x')}}),
               std::invalid_argument);
}

// --- Property: random file sets round-trip through isoinfo ---------------------------------

rc::Gen<std::string> file_name() {
  static const std::string kAll =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-";
  static const std::string kFew = "ab._-";  // short names from few characters collide often
  const auto name_from = [](const std::string& alphabet, int max_length) {
    return rc::gen::mapcat(rc::gen::inRange(1, max_length + 1), [alphabet](int length) {
      return rc::gen::container<std::string>(static_cast<std::size_t>(length),
                                             rc::gen::elementOf(alphabet));
    });
  };
  return rc::gen::suchThat(
      rc::gen::oneOf(name_from(kAll, static_cast<int>(kIsoMaxNameLength)), name_from(kFew, 4)),
      [](const std::string& name) { return name != "." && name != ".." && name.back() != '.'; });
}

std::string lower(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// Each case runs isoinfo 2 + 2 * (number of files) times, tens of milliseconds in all, so
// this binary defaults to 30 cases per property instead of rapidcheck's 100. rapidcheck reads
// RC_PARAMS on first use, after static initialization; a RC_PARAMS set by the caller wins.
[[maybe_unused]] const bool kModestCaseCount = [] {
  setenv("RC_PARAMS", "max_success=30", /*overwrite=*/0);
  return true;
}();

RC_GTEST_PROP(Iso9660WriterProperty, RandomFilesRoundTripThroughIsoinfo, ()) {
  const auto count = *rc::gen::inRange<std::size_t>(1, 5);
  const auto names = *rc::gen::uniqueBy<std::vector<std::string>>(count, file_name(), lower);
  std::vector<IsoFile> files;
  for (const auto& name : names) {
    // Sizes around sector boundaries and up to several sectors; bytes from a seeded PRNG
    // (cheaper than generating each byte through rapidcheck).
    const auto size = *rc::gen::oneOf(rc::gen::inRange<std::size_t>(0, 5 * 2048 + 7),
                                      rc::gen::element<std::size_t>(0, 1, 2047, 2048, 2049, 4096));
    const auto seed = *rc::gen::arbitrary<std::uint32_t>();
    std::mt19937 random(seed);
    std::string content(size, '\0');
    for (auto& c : content) c = static_cast<char>(random());
    files.push_back({name, content});
  }

  const std::string image = write_iso9660("cidata", files);
  RC_ASSERT(image.size() % 2048 == 0);
  RC_ASSERT(le32_at(image, 16 * 2048 + 80) * 2048u == image.size());

  TempDir dir;
  const fs::path iso = dir.path() / "x.iso";
  write_bytes(iso, image);
  auto listed = isoinfo_paths(iso, true);
  auto expected = rooted(names);
  std::sort(listed.begin(), listed.end());
  std::sort(expected.begin(), expected.end());
  RC_ASSERT(listed == expected);
  const auto contents = isoinfo_extract_all(iso, rooted(names), true);
  for (std::size_t i = 0; i < files.size(); ++i)
    RC_ASSERT(difference(contents[i], files[i].content) == "");

  // Primary tree: one distinct name per file, holding the same contents.
  const auto primary = isoinfo_paths(iso, false);
  RC_ASSERT(std::set<std::string>(primary.begin(), primary.end()).size() == files.size());
  const auto primary_contents = isoinfo_extract_all(iso, primary, false);
  std::multiset<std::string> want, got(primary_contents.begin(), primary_contents.end());
  for (const auto& file : files) want.insert(file.content);
  const bool primary_tree_holds_same_contents = want == got;  // (don't print the contents)
  RC_ASSERT(primary_tree_holds_same_contents);
}

}  // namespace
}  // namespace bowline::guest
