// The CLI's own end of what it forwards: whole writes to a descriptor, and listening sockets on
// 127.0.0.1 (this machine only) for `space vnc` and `forward`.
#pragma once

#include <string_view>

namespace bowline::cli {

// Writes all of `data` (retrying on EINTR); false when the descriptor is gone.
bool write_all(int fd, std::string_view data);
// A listening TCP socket on 127.0.0.1:`port` (0: any free one). Throws CliError(kExitInvalid)
// naming the port when it cannot listen.
int listen_loopback(unsigned port);
// The port a listening socket is bound to.
unsigned bound_port(int listener);

}  // namespace bowline::cli
