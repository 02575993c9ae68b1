#include "util/control_chars.hpp"

#include "util/utf8.hpp"

namespace bowline::util {

std::optional<ControlCharacter> control_at(std::string_view text, std::size_t at) {
  auto byte = [&](std::size_t i) {
    return i < text.size() ? static_cast<unsigned char>(text[i]) : 0u;
  };
  if (at >= text.size()) return std::nullopt;
  const auto u = byte(at);
  if (u < 0x20 || u == 0x7f) return ControlCharacter{u, 1};
  if (u == 0xc2 && byte(at + 1) >= 0x80 && byte(at + 1) <= 0x9f)
    return ControlCharacter{byte(at + 1), 2};
  if (u == 0xe2 && byte(at + 1) == 0x80 && (byte(at + 2) == 0xa8 || byte(at + 2) == 0xa9))
    return ControlCharacter{0x2000u | (byte(at + 2) - 0x80u), 3};
  return std::nullopt;
}

bool has_control_characters(std::string_view text, bool allow_tab) {
  for (std::size_t i = 0; i < text.size(); ++i)
    if (const auto c = control_at(text, i); c && !(allow_tab && c->code == U'\t')) return true;
  return false;
}

bool has_invisible_characters(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto cp = decode_utf8(text, i);
    if (!cp) {
      ++i;  // not a character at all: others judge malformed text
      continue;
    }
    const char32_t c = cp->value;
    if (c == 0xad || c == 0x61c || (c >= 0x200b && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) ||
        (c >= 0x2060 && c <= 0x2064) || (c >= 0x2066 && c <= 0x2069) || c == 0xfeff)
      return true;
    i += cp->length;
  }
  return false;
}

}  // namespace bowline::util
