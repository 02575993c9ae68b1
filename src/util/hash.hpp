// SHA-256 (OpenSSL), for derived identifiers and checksums.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace bowline::util {

std::array<std::uint8_t, 32> sha256(std::string_view data);
std::string sha256_hex(std::string_view data);  // lowercase

}  // namespace bowline::util
