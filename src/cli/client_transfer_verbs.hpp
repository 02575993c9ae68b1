// bowline space export|import (client_transfer_verbs.cpp).
#pragma once

#include <CLI/CLI.hpp>

namespace bowline::cli {

// Adds `export` and `import` to the `space` group.
void add_space_transfer_verbs(CLI::App& space_group, int& exit_code);

}  // namespace bowline::cli
