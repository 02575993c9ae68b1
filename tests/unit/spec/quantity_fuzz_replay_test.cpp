// Replays the quantity fuzz corpus (tests/fuzz/corpus/quantity) through the fuzz target's entry
// point under the normal compiler, so CI runs every seed and every input the fuzzer once crashed
// on. An input that breaks an invariant aborts the test binary (tests/fuzz/quantity_entry.hpp says
// which).
#include <gtest/gtest.h>

#include "../../fuzz/corpus_files.hpp"
#include "../../fuzz/quantity_entry.hpp"

namespace {

TEST(QuantityFuzzReplay, CorpusHasSeeds) {
  EXPECT_GE(bowline::fuzz::corpus_files("quantity").size(), 10u);
}

TEST(QuantityFuzzReplay, EveryInputPassesTheTargetsChecks) {
  for (const auto& path : bowline::fuzz::corpus_files("quantity")) {
    SCOPED_TRACE(path.filename().string());
    const auto bytes = bowline::fuzz::read_corpus_file(path);
    EXPECT_NO_THROW(bowline::spec::fuzz::run_one(
        reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
  }
}

}  // namespace
