// `bowline server`: the store, libvirt, the engine and the HTTP API wired together from the
// settings, serving until SIGINT or SIGTERM.
#pragma once

#include <ostream>

#include "server/settings.hpp"

namespace bowline::server {

// Blocks SIGINT and SIGTERM in the calling thread (and so in every thread it starts later);
// call before anything starts threads.
void block_stop_signals();

// Runs the server until SIGINT or SIGTERM (block_stop_signals() first). Returns the exit code;
// `out` gets the listening address, the domain type chosen and, on first start, where the
// admin token is; `err` warnings (software emulation) and failures (domain type kvm where KVM
// does not run).
int run_server(const ServerSettings& settings, std::ostream& out, std::ostream& err,
               bool out_is_terminal = false);

}  // namespace bowline::server
