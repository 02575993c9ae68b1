// `bowline server`: the store, libvirt, the engine and the HTTP API wired together from the
// settings, serving until SIGINT or SIGTERM.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

#include "api/settings.hpp"
#include "store/store.hpp"

namespace bowline::api {

// On a store without users: creates the admin user "admin" with a first API token, writes the
// token to `token_file` (mode 0600) and returns it; nullopt when there are users already.
std::optional<std::string> bootstrap_admin(store::Store& store,
                                           const std::filesystem::path& token_file);

// Blocks SIGINT and SIGTERM in the calling thread (and so in every thread it starts later);
// call before anything starts threads.
void block_stop_signals();

// Runs the server until SIGINT or SIGTERM (block_stop_signals() first). Returns the exit code;
// `out` gets the listening address and, on first start, where the admin token is (the token
// itself only when `out` is a terminal: a service's output ends up in logs that others read),
// `err` failures.
int run_server(const ServerSettings& settings, std::ostream& out, std::ostream& err,
               bool out_is_terminal = false);

}  // namespace bowline::api
