// What counts as one client when connections and logins are counted per address: an IPv4
// address, or the /64 an IPv6 address lies in (one host usually holds a whole /64, so
// counting single IPv6 addresses would give it 2^64 tries).
#pragma once

#include <string>
#include <string_view>

namespace bowline::api {

// "192.0.2.7" -> "192.0.2.7"; "2001:db8:1:2:3:4:5:6" -> "2001:db8:1:2::/64"; "[::1]" and an
// IPv4-mapped IPv6 address ("::ffff:192.0.2.7" -> "192.0.2.7") too. Text that is no address
// comes back as it is.
std::string address_prefix(std::string_view address);

}  // namespace bowline::api
