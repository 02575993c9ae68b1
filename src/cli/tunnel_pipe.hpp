// One TCP stream carried over a tunnel WebSocket (GET /api/v1/spaces/{id}/tunnel/{port}) and
// two local file descriptors, both ways, with half-close: what `bowline tunnel` (stdin and
// stdout, for ssh's ProxyCommand) and `bowline forward` (one accepted connection) do.
#pragma once

#include <string>

#include "cli/client.hpp"

namespace bowline::cli {

// The tunnel's path for a space id and port.
std::string tunnel_path(const std::string& space_id, unsigned port);

// Carries bytes until both directions have ended or the WebSocket closes. The end of `in`
// becomes an empty frame (the guest reads EOF); the guest's end shuts `out` for writing
// (`out_is_socket`) or closes it. Throws what WsConnection throws when the tunnel is refused.
void splice_tunnel(const Endpoint& endpoint, const std::string& path, int in, int out,
                   bool out_is_socket);

}  // namespace bowline::cli
