// The files of one corpus under tests/fuzz/corpus/, for the replay tests (tests/unit/*/
// *fuzz*_test.cpp), which run each through the fuzz target's entry point under any compiler.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace bowline::fuzz {

inline std::vector<std::filesystem::path> corpus_files(const std::string& name) {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path dir =
      std::filesystem::path(BOWLINE_SOURCE_DIR) / "tests/fuzz/corpus" / name;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

inline std::string read_corpus_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace bowline::fuzz
