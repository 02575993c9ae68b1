// libFuzzer target for the HTTP request path (parse_request_bytes and bowline's readers of
// request lines and headers): see tests/fuzz/README.md.
#include <cstddef>
#include <cstdint>

#include "http_request_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bowline::api::fuzz::run_one(data, size);
  return 0;
}
