#include "util/control_chars.hpp"

namespace bowline::util {

bool has_control_characters(std::string_view text, bool allow_tab) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto u = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0u;
    if ((u < 0x20 && !(allow_tab && u == '\t')) || u == 0x7f) return true;
    if (u == 0xc2 && next >= 0x80 && next <= 0x9f) return true;  // C1
    if (u == 0xe2 && next == 0x80 && i + 2 < text.size() &&
        (static_cast<unsigned char>(text[i + 2]) == 0xa8 ||
         static_cast<unsigned char>(text[i + 2]) == 0xa9))
      return true;  // U+2028, U+2029
  }
  return false;
}

}  // namespace bowline::util
