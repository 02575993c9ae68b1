// Small string helpers with no better home.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace bowline::util {

bool starts_with_ci(std::string_view text, std::string_view prefix);
std::string to_lower(std::string_view text);
std::string to_upper(std::string_view text);
std::string trim(std::string_view text);
std::vector<std::string> split(std::string_view text, char separator);
// Levenshtein distance, for "did you mean" suggestions.
std::size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word`, if it is close enough to be a plausible typo.
std::string nearest(std::string_view word, const std::vector<std::string_view>& candidates);
// 8-4-4-4-12 hex digits with dashes (any case): how space ids and domain UUIDs look.
bool looks_like_uuid(std::string_view text);

}  // namespace bowline::util
