// The quantity parsers' fuzzing entry point (spec/quantity.hpp), shared by the libFuzzer target
// (quantity_fuzz.cpp) and the corpus replay test (tests/unit/spec/quantity_fuzz_replay_test.cpp).
//
// Whatever the text: no crash, no exception, an error with words; and what is accepted means
// what it says: a size is its digits times its unit, a whole number prints back as its text,
// and a size written by format_binary_size reads back as the same number of bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "spec/quantity.hpp"

namespace bowline::spec::fuzz {

inline void check(bool ok, const char* what, const std::string& text) {
  if (!ok) {
    std::fprintf(stderr, "quantity invariant broken for \"%s\": %s\n", text.c_str(), what);
    std::abort();
  }
}

template <typename T>
void check_shape(const Parsed<T>& parsed, const std::string& text) {
  if (!parsed.ok()) check(!parsed.error().empty(), "a refusal says why", text);
}

// format_binary_size's text reads back through the Kubernetes parser as the same bytes, and
// through knot's whenever its unit is one knot has (K, M, G, T).
inline void check_round_trip(std::uint64_t bytes, const std::string& text) {
  const auto formatted = format_binary_size(bytes);
  const auto back = parse_memory_quantity(formatted);
  check(back.ok() && back.value() == bytes, "format_binary_size reads back (quantity)", text);
  const char unit = formatted.size() > 2 ? formatted[formatted.size() - 2] : '0';
  if (formatted.back() != 'i' || unit == 'K' || unit == 'M' || unit == 'G' || unit == 'T') {
    const auto size = parse_size(formatted);
    check(size.ok() && size.value() == bytes, "format_binary_size reads back (size)", text);
  }
}

inline void check_size(const std::string& text) {
  const auto size = parse_size(text);
  check_shape(size, text);
  if (!size.ok()) return;
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  check(digits > 0, "an accepted size starts with digits", text);
  const auto rest = text.substr(digits);
  if (rest.empty()) {
    check(
        std::to_string(size.value()) == text.substr(text.find_first_not_of('0') == std::string::npos
                                                        ? text.size() - 1
                                                        : text.find_first_not_of('0')),
        "a bare size is its digits in bytes", text);
  }
  check_round_trip(size.value(), text);
}

inline void check_memory(const std::string& text) {
  const auto memory = parse_memory_quantity(text);
  check_shape(memory, text);
  if (!memory.ok()) return;
  check(text.find_first_of("+-eE ") == std::string::npos || text.back() == 'E' ||
            text.ends_with("Ei"),
        "no sign, exponent or blank is accepted", text);
  check_round_trip(memory.value(), text);
}

inline void check_whole(const std::string& text, std::uint64_t max) {
  const auto whole = parse_whole_number(text, max);
  check_shape(whole, text);
  if (!whole.ok()) return;
  check(whole.value() >= 1 && whole.value() <= max, "a whole number is within 1..max", text);
  check(std::to_string(whole.value()) == text, "a whole number is written as its text", text);
}

inline void run_one(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  check_size(text);
  check_memory(text);
  // The first byte picks a bound; the rest is the number: small, CPU-like and the largest.
  static constexpr std::uint64_t kMaxima[] = {
      1, 9, 64, 1024, 4294967295ull, 18446744073709551615ull};
  if (size > 0) check_whole(text.substr(1), kMaxima[data[0] % std::size(kMaxima)]);
  check_whole(text, 4096);
}

}  // namespace bowline::spec::fuzz
