// bowline space snapshot|snapshots|restore|snapshot-delete|clone (client_snapshot_verbs.cpp).
#pragma once

#include <CLI/CLI.hpp>

namespace bowline::cli {

// Adds the snapshot and clone verbs to the `space` group.
void add_space_snapshot_verbs(CLI::App& space_group, int& exit_code);

}  // namespace bowline::cli
