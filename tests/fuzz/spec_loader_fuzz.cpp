// libFuzzer target for the template spec loader: build with -DBOWLINE_FUZZ=ON and clang, then
//   build-fuzz/tests/fuzz/spec_loader_fuzz tests/fuzz/corpus/spec_loader -max_total_time=120
#include <cstddef>
#include <cstdint>

#include "spec_loader_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  bowline::spec::fuzz::run_one(data, size);
  return 0;
}
