// RFC 6455 framing as the Kubernetes stream client needs it (ws_stream.cpp): masked frames out,
// whole frames taken from what the server sent. Apart from the socket code so that the unit
// tests and a fuzzer (tests/fuzz/ws_frames_fuzz.cpp) reach the parsing of the server's bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace bowline::kubevirt {

enum WsOpcode {
  kWsContinuation = 0,
  kWsText = 1,
  kWsBinary = 2,
  kWsClose = 8,
  kWsPing = 9,
  kWsPong = 10
};

// A frame's payload above which the server is not waited for: KubeVirt's frames carry a read
// of a socket (32 KiB), and a length field of up to 2^63 must not make the client buffer on.
inline constexpr std::uint64_t kWsMaxPayload = 16u * 1024u * 1024u;

struct WsFrame {
  int opcode = 0;  // the low four bits of the first byte (FIN and RSV are not looked at)
  std::string payload;
};

// Thrown by take_frame for a frame this client will not take (longer than kWsMaxPayload).
class WsFrameError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A client's frame: always masked with `mask` (its first 4 bytes; RFC 6455 5.3), never
// fragmented. The caller supplies the mask (random in ws_stream.cpp) so tests can fix it.
std::string encode_client_frame(int opcode, std::string_view payload, std::string_view mask);

// The first whole frame in `buffer`, taken out of it (unmasked if the server masked it);
// nullopt while it is incomplete, leaving `buffer` as it was. WsFrameError for a payload over
// kWsMaxPayload.
std::optional<WsFrame> take_frame(std::string& buffer);

}  // namespace bowline::kubevirt
