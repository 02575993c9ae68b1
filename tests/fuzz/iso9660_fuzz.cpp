// libFuzzer target for the ISO 9660 writer (guest/iso9660_writer.hpp): see tests/fuzz/README.md.
#include <cstddef>
#include <cstdint>

#include "iso9660_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bowline::guest::fuzz::run_one(data, size);
  return 0;
}
