// Whether text holds characters that start a new line or are invisible controls: what must not
// reach a generated document (YAML, a script) or a header-like field unescaped.
#pragma once

#include <string_view>

namespace bowline::util {

// C0 controls (tab allowed when `allow_tab`), DEL, C1 controls (U+0080..U+009F, U+0085 NEL among
// them) and U+2028/U+2029: every line break of YAML 1.1 and Unicode. Reads UTF-8.
bool has_control_characters(std::string_view text, bool allow_tab = false);

}  // namespace bowline::util
