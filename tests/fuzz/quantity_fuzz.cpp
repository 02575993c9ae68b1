// libFuzzer target for the quantity parsers (spec/quantity.hpp): see tests/fuzz/README.md.
#include <cstddef>
#include <cstdint>

#include "quantity_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bowline::spec::fuzz::run_one(data, size);
  return 0;
}
