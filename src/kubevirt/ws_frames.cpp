#include "kubevirt/ws_frames.hpp"

namespace bowline::kubevirt {

std::string encode_client_frame(int opcode, std::string_view payload, std::string_view mask) {
  if (mask.size() < 4) throw std::invalid_argument("a WebSocket mask has 4 bytes");
  std::string out;
  out += static_cast<char>(0x80 | opcode);
  const auto n = payload.size();
  if (n < 126) {
    out += static_cast<char>(0x80 | n);
  } else if (n < 65536) {
    out += static_cast<char>(0x80 | 126);
    out += static_cast<char>(n >> 8);
    out += static_cast<char>(n & 0xff);
  } else {
    out += static_cast<char>(0x80 | 127);
    for (int i = 7; i >= 0; --i)
      out += static_cast<char>((static_cast<std::uint64_t>(n) >> (8 * i)) & 0xff);
  }
  out += mask.substr(0, 4);
  for (std::size_t i = 0; i < n; ++i) out += static_cast<char>(payload[i] ^ mask[i % 4]);
  return out;
}

std::optional<WsFrame> take_frame(std::string& buffer) {
  if (buffer.size() < 2) return std::nullopt;
  const auto* b = reinterpret_cast<const unsigned char*>(buffer.data());
  std::size_t at = 2;
  std::uint64_t n = b[1] & 0x7f;
  if (n == 126) {
    if (buffer.size() < 4) return std::nullopt;
    n = (std::uint64_t{b[2]} << 8) | b[3];
    at = 4;
  } else if (n == 127) {
    if (buffer.size() < 10) return std::nullopt;
    n = 0;
    for (int i = 0; i < 8; ++i) n = (n << 8) | b[2 + i];
    at = 10;
  }
  // Checked before any sum: `at + n` would wrap for a length near 2^64 and pass for complete.
  if (n > kWsMaxPayload)
    throw WsFrameError("a WebSocket frame of " + std::to_string(n) + " bytes (at most " +
                       std::to_string(kWsMaxPayload) + ")");
  const bool masked = (b[1] & 0x80) != 0;
  const std::size_t mask_at = at;
  if (masked) at += 4;
  if (buffer.size() < at || buffer.size() - at < n) return std::nullopt;
  WsFrame f{b[0] & 0x0f, buffer.substr(at, n)};
  if (masked)
    for (std::size_t i = 0; i < f.payload.size(); ++i) f.payload[i] ^= buffer[mask_at + i % 4];
  buffer.erase(0, at + n);
  return f;
}

}  // namespace bowline::kubevirt
