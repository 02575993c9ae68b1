// Strict parsers for the sizes and counts a template may give. Each returns the value or a
// message saying what is wrong, in words a template author can act on.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace bowline::spec {

template <typename T>
struct Parsed {
  std::variant<T, std::string> result;
  bool ok() const { return result.index() == 0; }
  const T& value() const { return std::get<0>(result); }
  const std::string& error() const { return std::get<1>(result); }
};

// knot's sizes: a whole number with an optional binary unit K, M, G or T (any case), which
// may carry `i` and/or `B`: 4G = 4Gi = 4GiB = 4 GiB. A bare number is bytes. No decimals.
Parsed<std::uint64_t> parse_size(std::string_view text);

// A Kubernetes quantity used as bytes: decimal suffixes k M G T P E, binary Ki Mi Gi Ti Pi
// Ei, a fraction allowed when the result is a whole number of bytes. Milli (`m`) and
// exponent forms are rejected: neither makes sense for memory.
Parsed<std::uint64_t> parse_memory_quantity(std::string_view text);

// A positive whole number written in plain decimal, no sign, no leading zero, <= max.
Parsed<std::uint64_t> parse_whole_number(std::string_view text, std::uint64_t max);

// 4294967296 -> "4Gi", 1536 MiB -> "1536Mi", 1000 -> "1000"; the largest exact binary unit.
std::string format_binary_size(std::uint64_t bytes);

}  // namespace bowline::spec
