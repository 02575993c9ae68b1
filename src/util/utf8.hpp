// UTF-8, decoded once for every folder: what text must be before it reaches a generated
// document (YAML, XML, JSON) or a setting.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace bowline::util {

struct CodePoint {
  char32_t value = 0;
  std::size_t length = 0;  // bytes
};

// The well-formed sequence that starts at byte `at`: not overlong, not a surrogate, at most
// U+10FFFF, not cut short. nullopt for anything else (a stray continuation byte among them).
std::optional<CodePoint> decode_utf8(std::string_view text, std::size_t at);

// The offset of the first byte that does not start a well-formed sequence; npos when none.
std::size_t invalid_utf8_at(std::string_view text);

}  // namespace bowline::util
