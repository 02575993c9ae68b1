// Replays the iso9660 fuzz corpus (tests/fuzz/corpus/iso9660) through the fuzz target's entry point
// under the normal compiler, so CI runs every seed and every input the fuzzer once crashed
// on. An input that breaks an invariant aborts the test binary (tests/fuzz/iso9660_entry.hpp says
// which).
#include <gtest/gtest.h>

#include "../../fuzz/corpus_files.hpp"
#include "../../fuzz/iso9660_entry.hpp"

namespace {

TEST(Iso9660FuzzReplay, CorpusHasSeeds) {
  EXPECT_GE(bowline::fuzz::corpus_files("iso9660").size(), 10u);
}

TEST(Iso9660FuzzReplay, EveryInputPassesTheTargetsChecks) {
  for (const auto& path : bowline::fuzz::corpus_files("iso9660")) {
    SCOPED_TRACE(path.filename().string());
    const auto bytes = bowline::fuzz::read_corpus_file(path);
    EXPECT_NO_THROW(bowline::guest::fuzz::run_one(
        reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
  }
}

}  // namespace
