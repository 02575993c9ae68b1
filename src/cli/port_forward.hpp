// `bowline forward`'s loop, like kubectl port-forward: it listens on 127.0.0.1 at once and
// opens a tunnel for each local connection as it comes. A connection the guest cannot take
// now (its service not up yet, the space stopped or restarting, the server restarting) fails
// alone, with its reason on stderr; only what can never get better ends the forwarding.
#pragma once

#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "cli/client.hpp"

namespace bowline::cli {

struct ForwardTarget {
  std::string space_id;
  std::string space_name;                            // for the lines it prints
  std::vector<std::pair<unsigned, unsigned>> ports;  // local (0: any free), remote
};

// True for a refusal that no retry will change: the space is unknown (404), the port or the
// permission is not given (403), the credentials are not accepted (401), the server's
// certificate is not trusted. Anything else (409 not running, 502 refused by the guest, the
// server unreachable) may pass.
bool forward_error_is_final(const std::exception& e);

// Listens on every local port, prints where, and forwards until a final refusal, which it
// throws (the verb's exit code); never returns otherwise.
[[noreturn]] void forward_ports(const Endpoint& endpoint, const ForwardTarget& target);

}  // namespace bowline::cli
