// A TCP connection to an address and port, with a deadline: what the tunnel opens to a guest.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "util/upstream_error.hpp"

namespace bowline::util {

// Why a connect failed, as the system said it: callers decide by the code, never by the words.
class ConnectError : public UpstreamError {
 public:
  // `code`: the errno the connect failed with (ECONNREFUSED: nothing listens; ETIMEDOUT: no
  // answer within the timeout; EHOSTUNREACH, ENETUNREACH, ...), or 0 when the address is not
  // one (getaddrinfo refused it).
  ConnectError(const std::string& message, int code)
      : UpstreamError("guest", message), code_(code) {}
  int code() const noexcept { return code_; }
  bool refused() const noexcept;    // something answered that nothing listens there
  bool timed_out() const noexcept;  // nothing answered within the timeout

 private:
  int code_;
};

// A connected socket in non-blocking mode, with TCP_NODELAY (close it when done). Throws
// ConnectError ("guest") naming the address and port and the reason (refused, unreachable,
// timed out), with its errno, when it cannot connect.
int tcp_connect(const std::string& address, std::uint16_t port, std::chrono::milliseconds timeout);

}  // namespace bowline::util
