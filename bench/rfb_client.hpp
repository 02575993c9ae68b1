// A minimal RFB 3.8 client for the VNC throughput figure: security None (QEMU offers only that
// on a libvirt graphics fd opened with SKIPAUTH) or VNC authentication with a password (QEMU's
// TCP listener of a bowline domain), 32-bit true colour, the Raw encoding only,
// and full-screen non-incremental FramebufferUpdateRequests, so that QEMU sends every pixel of
// every frame and the figure is about moving bytes rather than QEMU's encoders.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "byte_pipe.hpp"

namespace bowline::bench {

struct RfbThroughput {
  double seconds = 0;       // from the first complete update to the last
  std::uint64_t bytes = 0;  // RFB bytes of the updates in that time (headers and pixels)
  std::uint64_t updates = 0;
  unsigned width = 0, height = 0;
};

class RfbClient {
 public:
  // Does the handshake; throws when the server wants what we cannot give.
  explicit RfbClient(BytePipe& pipe, const std::string& password = {});

  // Keeps `in_flight` full-screen requests outstanding for `duration` (the first update is
  // the warm-up and not counted).
  RfbThroughput measure(std::chrono::milliseconds duration, int in_flight);

 private:
  void request();
  // One server message; returns the bytes of a FramebufferUpdate, 0 for anything else.
  std::uint64_t next_message();

  BytePipe& pipe_;
  unsigned width_ = 0, height_ = 0;
};

}  // namespace bowline::bench
