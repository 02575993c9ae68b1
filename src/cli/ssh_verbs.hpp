// Reaching a space from this machine through the server, nothing installed in the guest and no
// port opened on the host: `bowline tunnel` (a TCP stream on stdin/stdout: ssh's
// ProxyCommand), `bowline forward` (local ports, like kubectl port-forward), `bowline ssh`
// (OpenSSH with the space's pinned host key) and `bowline ssh-config` (so plain `ssh
// dev.bowline`, scp, rsync, git and VS Code Remote-SSH work).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace bowline::cli {

// A space as ssh names it: "dev", "dev.bowline" (the caller's space dev) or
// "dev.alice.bowline" (alice's, for admins).
struct SshHost {
  std::string space;
  std::optional<std::string> owner;
};
SshHost parse_ssh_host(const std::string& host);

// Replaces the text between bowline's marker lines in an ssh config (or appends the block),
// keeping everything else as it was.
std::string with_bowline_block(const std::string& config, const std::string& block);

// "[LOCAL:]REMOTE" of `bowline forward`; nullopt when it is not two ports (0 local: any free).
std::optional<std::pair<unsigned, unsigned>> parse_forward(const std::string& text);

void add_ssh_verbs(CLI::App& app, int& exit_code);

}  // namespace bowline::cli
