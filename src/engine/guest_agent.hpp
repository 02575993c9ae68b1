// Making a booted guest someone else's through the QEMU guest agent: no reboot, no second
// cloud-init run. This is what lets a pool hand out a ready space in well under a second.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <functional>
#include <stdexcept>

namespace bowline::engine {

// Sends one agent command (JSON) to one guest and returns the reply (JSON); throws when the
// agent cannot be reached. In the server: Hypervisor::agent_command for the member's domain.
using AgentCall = std::function<std::string(const std::string& json, std::chrono::seconds timeout)>;

struct GuestIdentity {
  std::string username;  // created when missing, with passwordless sudo like cloud-init's user
  std::vector<std::string> ssh_keys;         // replace the user's authorized_keys
  std::optional<std::string> password_hash;  // crypt(3), as the seed has it; none: locked
  std::string hostname;                      // empty: keep the guest's
  std::string previous_user;                 // removed with its home when it is not `username`
};

class GuestAgentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The agent refused to start the program (e.g. it does not exist in the guest).
class GuestExecStartError : public GuestAgentError {
 public:
  using GuestAgentError::GuestAgentError;
};

// Applies `identity` in the guest: renames `previous_user`'s account when the image has perl
// (the fast way), else makes the account with useradd (see identity_scripts.hpp). Throws what
// `agent` throws when the agent cannot be reached, GuestAgentError when a step fails inside the
// guest (with its output).
void apply_identity(const AgentCall& agent, const GuestIdentity& identity,
                    std::chrono::seconds timeout = std::chrono::seconds(30));

// Returns once the agent answers guest-ping, asking again for up to `patience`: after a resume
// the agent's channel takes a moment to come back. Throws GuestAgentError with the last
// reason when it never answers.
void wait_for_agent(const AgentCall& agent, std::chrono::seconds patience);

// Runs a program in the guest (guest-exec) and waits for it; returns its exit code, with
// stdout+stderr in `output`. The agent only offers a status call to learn when it ended.
int guest_exec(const AgentCall& agent, const std::string& path,
               const std::vector<std::string>& args, std::string& output,
               std::chrono::milliseconds timeout);

}  // namespace bowline::engine
