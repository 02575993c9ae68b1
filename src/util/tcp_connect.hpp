// A TCP connection to an address and port, with a deadline: what the tunnel opens to a guest.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace bowline::util {

// A connected socket in non-blocking mode, with TCP_NODELAY (close it when done). Throws
// UpstreamError ("guest") naming the address and port and the reason (refused, unreachable, timed
// out) when it cannot connect.
int tcp_connect(const std::string& address, std::uint16_t port, std::chrono::milliseconds timeout);

}  // namespace bowline::util
