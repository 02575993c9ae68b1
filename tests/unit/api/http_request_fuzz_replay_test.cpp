// Replays the http_request fuzz corpus (tests/fuzz/corpus/http_request) through the fuzz target's
// entry point under the normal compiler, so CI runs every seed and every input the fuzzer once
// crashed on. An input that breaks an invariant aborts the test binary
// (tests/fuzz/http_request_entry.hpp says which).
#include <gtest/gtest.h>

#include "../../fuzz/corpus_files.hpp"
#include "../../fuzz/http_request_entry.hpp"

namespace {

TEST(HttpRequestFuzzReplay, CorpusHasSeeds) {
  EXPECT_GE(bowline::fuzz::corpus_files("http_request").size(), 10u);
}

TEST(HttpRequestFuzzReplay, EveryInputPassesTheTargetsChecks) {
  for (const auto& path : bowline::fuzz::corpus_files("http_request")) {
    SCOPED_TRACE(path.filename().string());
    const auto bytes = bowline::fuzz::read_corpus_file(path);
    EXPECT_NO_THROW(bowline::api::fuzz::run_one(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                                bytes.size()));
  }
}

}  // namespace
