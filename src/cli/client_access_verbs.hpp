// bowline space console|vnc: a space's serial console in this terminal, and its display
// forwarded to a local port for a desktop VNC viewer, both over the server's WebSockets.
#pragma once

#include <CLI/CLI.hpp>

namespace bowline::cli {

// Adds `console` and `vnc` to the `space` group.
void add_space_access_verbs(CLI::App& space_group, int& exit_code);

}  // namespace bowline::cli
