// Replays the ws_frames fuzz corpus (tests/fuzz/corpus/ws_frames) through the fuzz target's entry
// point under the normal compiler, so CI runs every seed and every input the fuzzer once crashed
// on. An input that breaks an invariant aborts the test binary (tests/fuzz/ws_frames_entry.hpp says
// which).
#include <gtest/gtest.h>

#include "../../fuzz/corpus_files.hpp"
#include "../../fuzz/ws_frames_entry.hpp"

namespace {

TEST(WsFramesFuzzReplay, CorpusHasSeeds) {
  EXPECT_GE(bowline::fuzz::corpus_files("ws_frames").size(), 10u);
}

TEST(WsFramesFuzzReplay, EveryInputPassesTheTargetsChecks) {
  for (const auto& path : bowline::fuzz::corpus_files("ws_frames")) {
    SCOPED_TRACE(path.filename().string());
    const auto bytes = bowline::fuzz::read_corpus_file(path);
    EXPECT_NO_THROW(bowline::kubevirt::fuzz::run_one(
        reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
  }
}

}  // namespace
