// Replays the libFuzzer corpus through the fuzz target's entry point under the normal compiler,
// so CI exercises every seed and every input the fuzzer once crashed on. An input that breaks
// an invariant aborts the test binary (tests/fuzz/spec_loader_entry.hpp says which).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../../fuzz/spec_loader_entry.hpp"

namespace bowline::spec {
namespace {

std::vector<std::filesystem::path> corpus_files() {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path dir =
      std::filesystem::path(BOWLINE_SOURCE_DIR) / "tests/fuzz/corpus/spec_loader";
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(FuzzCorpusReplay, CorpusHasSeeds) {
  EXPECT_GE(corpus_files().size(), 12u);
}

TEST(FuzzCorpusReplay, EveryInputLoadsWithoutCrashingOrThrowing) {
  for (const auto& path : corpus_files()) {
    SCOPED_TRACE(path.filename().string());
    const auto text = read(path);
    EXPECT_NO_THROW(fuzz::run_one(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
  }
}

TEST(FuzzCorpusReplay, SeedsFromExamplesStayValid) {
  for (const char* name : {"example_bridged.yaml", "nat.yaml", "cozystack.yaml"}) {
    SCOPED_TRACE(name);
    const auto text =
        read(std::filesystem::path(BOWLINE_SOURCE_DIR) / "tests/fuzz/corpus/spec_loader" / name);
    const auto result = load_spec(text, nullptr);
    EXPECT_TRUE(result.spec.has_value());
  }
}

}  // namespace
}  // namespace bowline::spec
