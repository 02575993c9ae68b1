// One browser's VNC session: the bytes of a socket to the domain's VNC server (an fd from
// Hypervisor::open_graphics) carried in WebSocket binary frames both ways, as noVNC expects.
// RFB is not interpreted; QEMU's server sees one more client.
#pragma once

#include <memory>
#include <string>

#include "api/http.hpp"

namespace bowline::api {

class VncBridge {
 public:
  // Takes ownership of `fd`. Starts a thread that pumps until either side closes.
  VncBridge(int fd, std::shared_ptr<SocketPeer> peer);
  ~VncBridge();  // stop(), then joins
  VncBridge(const VncBridge&) = delete;
  VncBridge& operator=(const VncBridge&) = delete;

  // Bytes from the browser; never blocks.
  void input(std::string bytes);
  // Ends the session (closes the fd and the WebSocket). Idempotent.
  void stop();

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace bowline::api
