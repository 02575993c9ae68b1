#include "spec/ipv4.hpp"

#include <charconv>

namespace bowline::spec {

std::optional<Ipv4Address> Ipv4Address::parse(std::string_view text) {
  std::uint32_t value = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (text.empty() || text.front() != '.') return std::nullopt;
      text.remove_prefix(1);
    }
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    if (digits == 0 || digits > 3 || (digits > 1 && text[0] == '0')) return std::nullopt;
    unsigned octet = 0;
    std::from_chars(text.data(), text.data() + digits, octet);
    if (octet > 255) return std::nullopt;
    value = (value << 8) | octet;
    text.remove_prefix(digits);
  }
  if (!text.empty()) return std::nullopt;
  return Ipv4Address{value};
}

std::string Ipv4Address::to_string() const {
  return std::to_string(value >> 24) + '.' + std::to_string((value >> 16) & 255) + '.' +
         std::to_string((value >> 8) & 255) + '.' + std::to_string(value & 255);
}

std::optional<Ipv4Network> Ipv4Network::parse(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto address = Ipv4Address::parse(text.substr(0, slash));
  const auto prefix_text = text.substr(slash + 1);
  if (!address || prefix_text.empty() || prefix_text.size() > 2 ||
      (prefix_text.size() > 1 && prefix_text[0] == '0'))
    return std::nullopt;
  unsigned prefix = 0;
  auto [end, ec] =
      std::from_chars(prefix_text.data(), prefix_text.data() + prefix_text.size(), prefix);
  if (ec != std::errc{} || end != prefix_text.data() + prefix_text.size() || prefix > 32)
    return std::nullopt;
  Ipv4Network network{*address, prefix};
  if ((address->value & network.mask()) != address->value) return std::nullopt;
  return network;
}

Ipv4Address Ipv4Network::first_usable() const {
  return prefix >= 31 ? address : Ipv4Address{address.value + 1};
}

Ipv4Address Ipv4Network::last_usable() const {
  return prefix >= 31 ? broadcast() : Ipv4Address{broadcast().value - 1};
}

std::string Ipv4Network::to_string() const {
  return address.to_string() + '/' + std::to_string(prefix);
}

}  // namespace bowline::spec
