// IPv4 addresses and networks: parsed strictly (dotted quad, no leading zeros, which
// inet_aton would read as octal).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace bowline::spec {

struct Ipv4Address {
  std::uint32_t value = 0;
  static std::optional<Ipv4Address> parse(std::string_view text);
  std::string to_string() const;
  auto operator<=>(const Ipv4Address&) const = default;
};

struct Ipv4Network {
  Ipv4Address address;  // the network address (host bits zero)
  unsigned prefix = 0;  // 0..32
  // Parses "a.b.c.d/n". Host bits must be zero: 198.51.100.7/24 is rejected, since a
  // template author who wrote it probably meant something else.
  static std::optional<Ipv4Network> parse(std::string_view text);
  std::uint32_t mask() const { return prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - prefix); }
  Ipv4Address broadcast() const { return {address.value | ~mask()}; }
  bool contains(Ipv4Address a) const { return (a.value & mask()) == address.value; }
  // First and last address a host may use; for /31 and /32 (RFC 3021) all addresses.
  Ipv4Address first_usable() const;
  Ipv4Address last_usable() const;
  std::string to_string() const;
  bool operator==(const Ipv4Network&) const = default;
};

}  // namespace bowline::spec
