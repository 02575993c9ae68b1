#include "util/duration.hpp"

#include <charconv>

namespace bowline::util {

std::optional<std::chrono::seconds> parse_duration(std::string_view text) {
  if (text.size() < 2) return std::nullopt;
  std::int64_t unit = 0;
  switch (text.back()) {
    case 's':
      unit = 1;
      break;
    case 'm':
      unit = 60;
      break;
    case 'h':
      unit = 3600;
      break;
    case 'd':
      unit = 86400;
      break;
    case 'w':
      unit = 7 * 86400;
      break;
    default:
      return std::nullopt;
  }
  const auto digits = text.substr(0, text.size() - 1);
  std::int64_t count = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
  constexpr std::int64_t kTenYears = 3653LL * 86400;
  if (error != std::errc() || end != digits.data() + digits.size() || count <= 0 ||
      count > kTenYears / unit)
    return std::nullopt;
  return std::chrono::seconds(count * unit);
}

}  // namespace bowline::util
