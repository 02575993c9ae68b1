// Characters that start a new line or are invisible controls: what must not reach a generated
// document (YAML, a script) or a field that templates paste into one, unescaped.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace bowline::util {

struct ControlCharacter {
  char32_t code = 0;       // the code point
  std::size_t length = 0;  // its bytes in UTF-8
};

// The control character that starts at byte `at` of UTF-8 `text`, if one does: C0 controls, DEL,
// C1 controls (U+0080..U+009F, U+0085 NEL among them) and U+2028/U+2029. Together these are
// every line break of YAML 1.1 and of Unicode.
std::optional<ControlCharacter> control_at(std::string_view text, std::size_t at);

// Whether `text` holds one (tab allowed when `allow_tab`).
bool has_control_characters(std::string_view text, bool allow_tab = false);

// Whether UTF-8 `text` holds a character that shows nothing yet changes the text: zero-width
// ones (U+200B..U+200D, U+2060..U+2064, U+FEFF), direction marks and overrides (U+061C,
// U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) and the soft hyphen (U+00AD). With them two
// different addresses look the same, or one reads backwards on screen.
bool has_invisible_characters(std::string_view text);

}  // namespace bowline::util
