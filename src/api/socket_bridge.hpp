// One WebSocket carrying the bytes of one socket, both ways, in binary frames: a space's VNC
// display (an fd from Hypervisor::open_graphics, as noVNC expects) or a TCP connection to a
// guest port (the tunnel). Nothing is interpreted. Memory stays bounded both ways: above a
// high-water mark of unsent bytes towards the client the socket is not read, and above one of
// bytes not yet written to the socket the client's frames are not read.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "api/http.hpp"

namespace bowline::api {

struct BridgeOptions {
  // A TCP stream's half-close, carried as an empty binary frame: from the client, the
  // socket's sending side is shut once what came before is written (the guest reads EOF);
  // when the socket's reading side ends, the client gets an empty frame. The WebSocket closes
  // once both directions have ended. Off (VNC): the end of the socket ends everything, and
  // empty frames are ignored.
  bool half_close = false;
  // When set, the client's bytes pass through it on their way to the socket (the display of
  // a viewer: rfb_view_only.hpp); when it throws, the session ends.
  std::function<std::string(std::string)> filter_input;
};

class SocketBridge {
 public:
  // Takes ownership of `fd`. Starts a thread that pumps until either side closes.
  SocketBridge(int fd, std::shared_ptr<SocketPeer> peer, BridgeOptions options = {});
  ~SocketBridge();  // stop(), then joins
  SocketBridge(const SocketBridge&) = delete;
  SocketBridge& operator=(const SocketBridge&) = delete;

  // Bytes from the client; never blocks.
  void input(std::string bytes);
  // Ends the session (closes the fd and the WebSocket). Idempotent.
  void stop();

  struct State;

 private:
  std::shared_ptr<State> state_;
};

// A WebSocket that carries the bytes of `fd` (opened before the upgrade, so what cannot be
// reached is an HTTP error the client can show rather than a socket that closes at once).
// `watch` starts the socket's watch and returns its id; `unwatch` ends it.
Response bridge_upgrade(int fd, BridgeOptions options,
                        std::function<std::uint64_t(std::shared_ptr<SocketPeer>)> watch,
                        std::function<void(std::uint64_t)> unwatch);

}  // namespace bowline::api
