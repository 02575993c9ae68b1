// bowline disk create|list|info|delete (client_disk_verbs.cpp).
#pragma once

#include <CLI/CLI.hpp>

namespace bowline::cli {

void add_disk_verbs(CLI::App& app, int& exit_code);

}  // namespace bowline::cli
