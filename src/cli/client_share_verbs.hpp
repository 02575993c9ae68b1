// bowline space share|unshare|shares (client_share_verbs.cpp).
#pragma once

#include <CLI/CLI.hpp>

namespace bowline::cli {

// Adds the sharing verbs to the `space` group.
void add_space_share_verbs(CLI::App& space_group, int& exit_code);

}  // namespace bowline::cli
