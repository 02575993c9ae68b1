#include "rfb_client.hpp"

// VNC authentication is DES, which OpenSSL 3 still has but calls deprecated.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/des.h>

#include <algorithm>
#include <stdexcept>

namespace bowline::bench {

namespace {

using namespace std::chrono_literals;
constexpr auto kTimeout = 10s;

unsigned u16(const std::string& s, std::size_t at) {
  return (static_cast<unsigned char>(s[at]) << 8) | static_cast<unsigned char>(s[at + 1]);
}

std::uint32_t u32(const std::string& s, std::size_t at) {
  return (static_cast<std::uint32_t>(u16(s, at)) << 16) | u16(s, at + 2);
}

void put16(std::string& s, unsigned v) {
  s += static_cast<char>((v >> 8) & 0xff);
  s += static_cast<char>(v & 0xff);
}

// The answer to a VNC authentication challenge: the 16 bytes encrypted with DES (ECB), the
// key being the password's first 8 bytes with each byte's bits in reverse order.
std::string vnc_auth_response(const std::string& challenge, const std::string& password) {
  DES_cblock key{};
  for (std::size_t i = 0; i < 8 && i < password.size(); ++i) {
    unsigned char b = static_cast<unsigned char>(password[i]), r = 0;
    for (int bit = 0; bit < 8; ++bit)
      r |= static_cast<unsigned char>(((b >> bit) & 1) << (7 - bit));
    key[i] = r;
  }
  DES_key_schedule schedule;
  DES_set_key_unchecked(&key, &schedule);
  std::string out(16, '\0');
  for (int block = 0; block < 2; ++block) {
    DES_cblock in, result;
    std::copy_n(challenge.data() + block * 8, 8, in);
    DES_ecb_encrypt(&in, &result, &schedule, DES_ENCRYPT);
    std::copy_n(result, 8, out.data() + block * 8);
  }
  return out;
}

}  // namespace

RfbClient::RfbClient(BytePipe& pipe, const std::string& password) : pipe_(pipe) {
  const auto version = pipe_.read_exact(12, kTimeout);
  if (version.compare(0, 4, "RFB ") != 0) throw std::runtime_error("not an RFB server");
  pipe_.write_all("RFB 003.008\n");
  const auto count = static_cast<unsigned char>(pipe_.read_exact(1, kTimeout)[0]);
  if (count == 0) throw std::runtime_error("the RFB server refused the connection");
  const auto types = pipe_.read_exact(count, kTimeout);
  if (types.find('\x01') != std::string::npos) {
    pipe_.write_all(std::string(1, '\x01'));
  } else if (types.find('\x02') != std::string::npos && !password.empty()) {
    pipe_.write_all(std::string(1, '\x02'));
    pipe_.write_all(vnc_auth_response(pipe_.read_exact(16, kTimeout), password));
  } else {
    throw std::runtime_error("the RFB server wants a security type we do not speak");
  }
  if (u32(pipe_.read_exact(4, kTimeout), 0) != 0)
    throw std::runtime_error("the RFB server refused the security handshake");
  pipe_.write_all(std::string(1, '\x01'));  // ClientInit: shared
  const auto init = pipe_.read_exact(24, kTimeout);
  width_ = u16(init, 0);
  height_ = u16(init, 2);
  pipe_.read_exact(u32(init, 20), kTimeout);  // the desktop's name

  // SetPixelFormat: 32 bpp, depth 24, little endian, true colour, 8 bits each.
  std::string format("\x00\x00\x00\x00\x20\x18\x00\x01", 8);
  put16(format, 255);
  put16(format, 255);
  put16(format, 255);
  format += std::string("\x10\x08\x00\x00\x00\x00", 6);
  // SetEncodings: Raw (0) only.
  std::string encodings("\x02\x00", 2);
  put16(encodings, 1);
  encodings += std::string(4, '\0');
  pipe_.write_all(format + encodings);
}

void RfbClient::request() {
  std::string r("\x03\x00", 2);  // FramebufferUpdateRequest, not incremental
  put16(r, 0);
  put16(r, 0);
  put16(r, width_);
  put16(r, height_);
  pipe_.write_all(r);
}

std::uint64_t RfbClient::next_message() {
  const auto type = static_cast<unsigned char>(pipe_.read_exact(1, kTimeout)[0]);
  switch (type) {
    case 0: {  // FramebufferUpdate
      const auto head = pipe_.read_exact(3, kTimeout);
      const auto rects = u16(head, 1);
      std::uint64_t bytes = 4;
      for (unsigned i = 0; i < rects; ++i) {
        const auto rect = pipe_.read_exact(12, kTimeout);
        const auto w = u16(rect, 4), h = u16(rect, 6);
        const auto encoding = static_cast<std::int32_t>(u32(rect, 8));
        if (encoding != 0)
          throw std::runtime_error("the RFB server sent encoding " + std::to_string(encoding) +
                                   ", not Raw");
        const std::uint64_t pixels = std::uint64_t{w} * h * 4;
        pipe_.skip(pixels, kTimeout);
        bytes += 12 + pixels;
      }
      return bytes;
    }
    case 1: {  // SetColourMapEntries
      const auto head = pipe_.read_exact(5, kTimeout);
      pipe_.skip(std::size_t{u16(head, 3)} * 6, kTimeout);
      return 0;
    }
    case 2:  // Bell
      return 0;
    case 3: {  // ServerCutText
      const auto head = pipe_.read_exact(7, kTimeout);
      pipe_.skip(u32(head, 3), kTimeout);
      return 0;
    }
    default:
      throw std::runtime_error("unexpected RFB message type " + std::to_string(type));
  }
}

RfbThroughput RfbClient::measure(std::chrono::milliseconds duration, int in_flight) {
  for (int i = 0; i < in_flight; ++i) request();
  while (next_message() == 0) {
  }
  request();
  RfbThroughput out;
  out.width = width_;
  out.height = height_;
  const auto t0 = std::chrono::steady_clock::now();
  auto last = t0;
  for (;;) {
    const auto bytes = next_message();
    if (bytes == 0) continue;
    last = std::chrono::steady_clock::now();
    out.bytes += bytes;
    ++out.updates;
    if (last - t0 >= duration) break;
    request();
  }
  out.seconds = std::chrono::duration<double>(last - t0).count();
  return out;
}

}  // namespace bowline::bench
