// libFuzzer target for the browser terminal's frames (api/terminal_frames.hpp): see
// tests/fuzz/README.md.
#include <cstddef>
#include <cstdint>

#include "terminal_frames_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bowline::api::fuzz::run_one(data, size);
  return 0;
}
