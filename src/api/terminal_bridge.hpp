// One browser terminal ("VM Terminal"): a shell in the guest (util::TerminalStream, an SSH
// session the engine opened) carried over one WebSocket. Frames from the client start with a
// byte that says what follows (terminal_frames.hpp): 0, bytes typed; 1, the window's size.
// Frames to the client are the shell's output as it comes. Each browser tab is a session of
// its own (a shell of its own), as with ssh.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "api/http.hpp"
#include "api/terminal_frames.hpp"
#include "util/byte_stream.hpp"

namespace bowline::api {

struct TerminalLimits {
  // Unsent output towards the client above which the shell is not read (sshd then waits on
  // its channel window: a slow browser slows the shell, the server's memory stays flat).
  std::size_t output_high_water = 1024 * 1024;
  // Typed bytes not yet taken by the shell beyond which the client is dropped.
  std::size_t input_limit = 1024 * 1024;
};

// A WebSocket for `shell` (opened before the upgrade, so that what cannot be reached is an
// HTTP answer). `watch` starts the socket's watch and returns its id; `unwatch` ends it.
Response terminal_upgrade(std::unique_ptr<util::TerminalStream> shell, TerminalLimits limits,
                          std::function<std::uint64_t(std::shared_ptr<SocketPeer>)> watch,
                          std::function<void(std::uint64_t)> unwatch);

}  // namespace bowline::api
