#include "spec/quantity.hpp"

#include <cctype>
#include <limits>

#include "util/strings.hpp"

namespace bowline::spec {
namespace {

// Fractions times multipliers up to 2^60 need more than 64 bits before the division.
__extension__ typedef unsigned __int128 Wide;

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// Multiplies with overflow detection.
bool checked_mul(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

bool parse_digits(std::string_view digits, std::uint64_t& out) {
  out = 0;
  for (char c : digits) {
    if (!checked_mul(out, 10, out)) return false;
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (out > kMax - d) return false;
    out += d;
  }
  return true;
}

template <typename T>
Parsed<T> fail(std::string message) {
  return Parsed<T>{std::variant<T, std::string>(std::in_place_index<1>, std::move(message))};
}

template <typename T>
Parsed<T> success(T value) {
  return Parsed<T>{std::variant<T, std::string>(std::in_place_index<0>, value)};
}

}  // namespace

Parsed<std::uint64_t> parse_size(std::string_view text) {
  const std::string original(text);
  if (text.empty()) return fail<std::uint64_t>("a size must not be empty (e.g. 512M, 4G)");
  std::size_t n = 0;
  while (n < text.size() && std::isdigit(static_cast<unsigned char>(text[n]))) ++n;
  const auto digits = text.substr(0, n);
  auto unit = util::to_upper(text.substr(n));
  if (digits.empty())
    return fail<std::uint64_t>("\"" + original +
                               "\" is not a size: expected a whole number with an optional unit K, "
                               "M, G or T (e.g. 512M, 4G)");
  if (!unit.empty() && unit.front() == '.')
    return fail<std::uint64_t>("\"" + original +
                               "\" has a fraction: sizes are whole numbers; use a smaller unit "
                               "(e.g. 1536M instead of 1.5G)");
  if (!unit.empty() && unit.front() == ' ') unit.erase(0, unit.find_first_not_of(' '));
  std::uint64_t multiplier = 1;
  std::string_view u = unit;
  if (!u.empty() && u.back() == 'B') u.remove_suffix(1);
  if (!u.empty() && u.back() == 'I') {
    u.remove_suffix(1);
    if (u.empty())
      return fail<std::uint64_t>("\"" + original +
                                 "\" has an unknown unit: use K, M, G or T (binary: 1G = 1024M)");
  }
  if (u.size() > 1)
    return fail<std::uint64_t>("\"" + original + "\" has an unknown unit \"" + unit +
                               "\": use K, M, G or T (binary: 1G = 1024M)");
  if (u.size() == 1) {
    switch (u.front()) {
      case 'K':
        multiplier = 1ull << 10;
        break;
      case 'M':
        multiplier = 1ull << 20;
        break;
      case 'G':
        multiplier = 1ull << 30;
        break;
      case 'T':
        multiplier = 1ull << 40;
        break;
      default:
        return fail<std::uint64_t>("\"" + original + "\" has an unknown unit \"" + unit +
                                   "\": use K, M, G or T (binary: 1G = 1024M)");
    }
  }
  std::uint64_t value = 0, bytes = 0;
  if (!parse_digits(digits, value) || !checked_mul(value, multiplier, bytes))
    return fail<std::uint64_t>("\"" + original + "\" is too large");
  return success(bytes);
}

Parsed<std::uint64_t> parse_memory_quantity(std::string_view text) {
  const std::string original(text);
  if (text.empty()) return fail<std::uint64_t>("a quantity must not be empty (e.g. 512Mi, 8Gi)");
  std::size_t n = 0;
  while (n < text.size() && (std::isdigit(static_cast<unsigned char>(text[n])) || text[n] == '.'))
    ++n;
  const auto number = text.substr(0, n);
  const auto suffix = text.substr(n);
  if (text.front() == '-' || text.front() == '+')
    return fail<std::uint64_t>("\"" + original +
                               "\" has a sign: memory is a positive quantity such as 8Gi");
  const auto dot = number.find('.');
  const auto whole = number.substr(0, dot);
  const auto fraction = dot == std::string_view::npos ? std::string_view{} : number.substr(dot + 1);
  if (number.empty() || (whole.empty() && fraction.empty()) ||
      fraction.find('.') != std::string_view::npos || (!whole.empty() && !all_digits(whole)) ||
      (!fraction.empty() && !all_digits(fraction)))
    return fail<std::uint64_t>("\"" + original +
                               "\" is not a quantity: expected a number with an optional suffix "
                               "Ki, Mi, Gi, Ti or k, M, G, T (e.g. 8Gi)");
  std::uint64_t multiplier = 1;
  if (suffix.empty()) {
    multiplier = 1;
  } else if (suffix == "m") {
    return fail<std::uint64_t>(
        "\"" + original +
        "\" is in thousandths of a byte (suffix m): write memory with Mi or M (e.g. 512Mi)");
  } else if ((suffix.front() == 'e' || suffix.front() == 'E') && suffix != "Ei") {
    // "E" alone is exa; "e" only starts an exponent (1e9), never a suffix of its own.
    if (suffix != "E")
      return fail<std::uint64_t>(
          "\"" + original +
          "\" uses an exponent: write memory with a unit suffix instead (e.g. 1G)");
    multiplier = 1000000000000000000ull;
  } else {
    static constexpr struct {
      std::string_view suffix;
      std::uint64_t multiplier;
    } kUnits[] = {{"k", 1000ull},          {"M", 1000000ull},          {"G", 1000000000ull},
                  {"T", 1000000000000ull}, {"P", 1000000000000000ull}, {"Ki", 1ull << 10},
                  {"Mi", 1ull << 20},      {"Gi", 1ull << 30},         {"Ti", 1ull << 40},
                  {"Pi", 1ull << 50},      {"Ei", 1ull << 60}};
    bool found = false;
    for (const auto& unit : kUnits)
      if (unit.suffix == suffix) {
        multiplier = unit.multiplier;
        found = true;
      }
    if (!found)
      return fail<std::uint64_t>("\"" + original + "\" has an unknown suffix \"" +
                                 std::string(suffix) +
                                 "\": use Ki, Mi, Gi, Ti (binary) or k, M, G, T (decimal)");
  }
  std::uint64_t whole_value = 0, bytes = 0;
  if (!parse_digits(whole.empty() ? "0" : whole, whole_value) ||
      !checked_mul(whole_value, multiplier, bytes))
    return fail<std::uint64_t>("\"" + original + "\" is too large");
  // The fraction must come out as whole bytes: fraction * multiplier / 10^len is integral.
  std::string_view frac = fraction;
  while (!frac.empty() && frac.back() == '0') frac.remove_suffix(1);
  if (!frac.empty()) {
    if (frac.size() > 18) return fail<std::uint64_t>("\"" + original + "\" has too many decimals");
    std::uint64_t numerator = 0, scale = 1;
    parse_digits(frac, numerator);
    for (std::size_t i = 0; i < frac.size(); ++i) scale *= 10;
    const Wide product = static_cast<Wide>(numerator) * multiplier;
    if (product % scale != 0)
      return fail<std::uint64_t>("\"" + original + "\" is not a whole number of bytes");
    const auto extra = product / scale;
    if (extra > static_cast<Wide>(kMax - bytes))
      return fail<std::uint64_t>("\"" + original + "\" is too large");
    bytes += static_cast<std::uint64_t>(extra);
  }
  return success(bytes);
}

Parsed<std::uint64_t> parse_whole_number(std::string_view text, std::uint64_t max) {
  const std::string original(text);
  const std::string range = "a whole number from 1 to " + std::to_string(max);
  if (text.empty()) return fail<std::uint64_t>("expected " + range);
  if (text.front() == '-')
    return fail<std::uint64_t>("\"" + original + "\" is negative: expected " + range);
  if (text.front() == '+')
    return fail<std::uint64_t>("\"" + original + "\" has a sign: expected " + range);
  if (!all_digits(text)) {
    if (text.find('.') != std::string_view::npos && all_digits(text.substr(0, text.find('.'))))
      return fail<std::uint64_t>("\"" + original + "\" is a fraction: expected " + range);
    if (text.back() == 'm')
      return fail<std::uint64_t>("\"" + original + "\" is in millicores: expected " + range +
                                 " (no unit)");
    return fail<std::uint64_t>("\"" + original + "\" is not " + range);
  }
  if (text.size() > 1 && text.front() == '0')
    return fail<std::uint64_t>(
        "\"" + original +
        "\" has a leading zero, which some tools read as octal: write it without");
  std::uint64_t value = 0;
  if (!parse_digits(text, value) || value > max)
    return fail<std::uint64_t>("\"" + original + "\" is above " + std::to_string(max));
  if (value == 0) return fail<std::uint64_t>("0 is not allowed: expected " + range);
  return success(value);
}

std::string format_binary_size(std::uint64_t bytes) {
  static constexpr std::string_view kUnits[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  std::size_t unit = 0;
  while (bytes != 0 && bytes % 1024 == 0 && unit + 1 < std::size(kUnits)) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + std::string(kUnits[unit]);
}

}  // namespace bowline::spec
