#include "kubevirt/base64.hpp"

#include <array>
#include <cstdint>

namespace bowline::kubevirt {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int value_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16 |
                            static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1]))
                                << 8 |
                            static_cast<unsigned char>(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += kAlphabet[(v >> shift) & 63];
  }
  const std::size_t rest = bytes.size() - i;
  if (rest > 0) {
    std::uint32_t v = static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (rest == 2) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  std::string digits;
  for (char c : text)
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') digits += c;
  if (digits.size() % 4 != 0) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < digits.size(); i += 4) {
    std::array<int, 4> v{};
    int padding = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const char c = digits[i + k];
      if (c == '=') {
        // Padding only in the last group's last one or two places.
        if (i + 4 != digits.size() || k < 2) return std::nullopt;
        ++padding;
        v[k] = 0;
      } else {
        if (padding > 0) return std::nullopt;
        v[k] = value_of(c);
        if (v[k] < 0) return std::nullopt;
      }
    }
    const std::uint32_t word =
        static_cast<std::uint32_t>(v[0]) << 18 | static_cast<std::uint32_t>(v[1]) << 12 |
        static_cast<std::uint32_t>(v[2]) << 6 | static_cast<std::uint32_t>(v[3]);
    out += static_cast<char>((word >> 16) & 255);
    if (padding < 2) out += static_cast<char>((word >> 8) & 255);
    if (padding < 1) out += static_cast<char>(word & 255);
  }
  return out;
}

}  // namespace bowline::kubevirt
