// The Kubernetes stream client's WebSocket framing (kubevirt/ws_frames.hpp) under fuzzing,
// shared by the libFuzzer target (ws_frames_fuzz.cpp) and the corpus replay test
// (tests/unit/kubevirt/ws_frames_fuzz_replay_test.cpp).
//
// The input is what a server sent. Frames are taken until one is incomplete or refused; each
// must use exactly its header and declared length, an incomplete one must leave the buffer as
// it was, and only WsFrameError may be thrown. Then the input, as a payload, must survive a
// client frame and come back unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kubevirt/ws_frames.hpp"

namespace bowline::kubevirt::fuzz {

inline void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "WebSocket framing invariant broken: %s\n", what);
    std::abort();
  }
}

// The frame's header length and declared payload length, read independently of take_frame;
// false while the header itself is incomplete.
inline bool header_of(const std::string& b, std::size_t& header, std::uint64_t& length) {
  if (b.size() < 2) return false;
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(b[i]); };
  length = byte(1) & 0x7f;
  header = 2;
  if (length == 126) {
    if (b.size() < 4) return false;
    length = (std::uint64_t{byte(2)} << 8) | byte(3);
    header = 4;
  } else if (length == 127) {
    if (b.size() < 10) return false;
    length = 0;
    for (int i = 0; i < 8; ++i) length = (length << 8) | byte(2 + static_cast<std::size_t>(i));
    header = 10;
  }
  if (byte(1) & 0x80) header += 4;
  return true;
}

inline void take_all(std::string buffer) {
  for (int frames = 0; frames < 1000; ++frames) {
    const std::string before = buffer;
    std::size_t header = 0;
    std::uint64_t length = 0;
    const bool has_header = header_of(before, header, length);
    try {
      const auto frame = take_frame(buffer);
      if (!frame) {
        check(buffer == before, "an incomplete frame leaves the buffer as it was");
        check(!has_header || before.size() < header || before.size() - header < length,
              "a frame is incomplete only when its bytes have not all come");
        return;
      }
      check(has_header && length <= kWsMaxPayload, "a frame taken had a header within limits");
      check(frame->payload.size() == length, "the payload is as long as declared");
      check(before.size() == header + length + buffer.size(), "a frame uses its bytes exactly");
      check(before.compare(header + length, std::string::npos, buffer) == 0,
            "what follows a frame stays");
      check(frame->opcode == (static_cast<unsigned char>(before[0]) & 0x0f), "the opcode");
      if (!(static_cast<unsigned char>(before[1]) & 0x80))
        check(before.compare(header, length, frame->payload) == 0, "an unmasked payload");
    } catch (const WsFrameError&) {
      check(has_header && length > kWsMaxPayload, "only an oversized frame is refused");
      return;
    }
  }
}

inline void run_one(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  take_all(bytes);
  const std::string mask = size >= 4 ? bytes.substr(0, 4) : std::string("\x01\x02\x03\x04", 4);
  const int opcode = size > 0 ? data[0] & 0x0f : kWsBinary;
  std::string wire = encode_client_frame(opcode, bytes, mask);
  const std::string whole = wire;
  const auto frame = take_frame(wire);
  check(frame && frame->opcode == opcode && frame->payload == bytes && wire.empty(),
        "a client frame reads back as it was sent");
  std::string part = whole.substr(0, whole.size() - 1);
  check(!take_frame(part), "a client frame without its last byte is incomplete");
}

}  // namespace bowline::kubevirt::fuzz
