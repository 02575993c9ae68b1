// libFuzzer target for the Kubernetes stream client's WebSocket framing (kubevirt/ws_frames.hpp):
// see tests/fuzz/README.md.
#include <cstddef>
#include <cstdint>

#include "ws_frames_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bowline::kubevirt::fuzz::run_one(data, size);
  return 0;
}
