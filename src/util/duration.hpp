// Durations as people type them: "90s", "45m", "12h", "30d", "2w" (one number, one unit).
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace bowline::util {

// nullopt for anything else (no unit, several units, zero, negative, over ten years).
std::optional<std::chrono::seconds> parse_duration(std::string_view text);

}  // namespace bowline::util
