#include "engine/guest_agent.hpp"

#include <openssl/evp.h>

#include <cctype>

#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "engine/identity_scripts.hpp"

namespace bowline::engine {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string base64_decode(const std::string& text) {
  if (text.empty()) return {};
  std::string out(3 * ((text.size() + 3) / 4), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return {};
  out.resize(static_cast<std::size_t>(n));
  // EVP_DecodeBlock counts the padding as zero bytes.
  for (auto it = text.rbegin(); it != text.rend() && *it == '=' && !out.empty(); ++it)
    out.pop_back();
  return out;
}

json command(const AgentCall& agent, const json& request, std::chrono::seconds timeout) {
  const auto reply = json::parse(agent(request.dump(), timeout), nullptr, false);
  if (reply.is_discarded() || !reply.is_object())
    throw GuestAgentError("the guest agent answered " + request.value("execute", "") +
                          " with something that is not JSON");
  if (reply.contains("error"))
    throw GuestAgentError(request.value("execute", "") + ": " +
                          reply["error"].value("desc", reply["error"].dump()));
  return reply.value("return", json());
}

// A value that reaches a line-based file (passwd, authorized_keys, hosts) must be one line;
// the host name also reaches a sed replacement, so it keeps to host name characters.
void check_identity(const GuestIdentity& id) {
  const auto one_line = [](const std::string& v) {
    return v.find_first_of("\n\r") == std::string::npos;
  };
  if (id.username.empty() || !one_line(id.username) || id.username.find(':') != std::string::npos)
    throw GuestAgentError("the user name " + id.username + " cannot be given to a guest");
  for (const auto& key : id.ssh_keys)
    if (!one_line(key)) throw GuestAgentError("an SSH key spans more than one line");
  if (id.password_hash &&
      (!one_line(*id.password_hash) || id.password_hash->find(':') != std::string::npos))
    throw GuestAgentError("the password hash is not a crypt(3) string");
  for (const char c : id.hostname)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.')
      throw GuestAgentError("the host name " + id.hostname + " has a character a host name cannot");
}

}  // namespace

int guest_exec(const AgentCall& agent, const std::string& path,
               const std::vector<std::string>& args, std::string& output,
               std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  json started;
  try {
    started = command(agent,
                      {{"execute", "guest-exec"},
                       {"arguments", {{"path", path}, {"arg", args}, {"capture-output", true}}}},
                      std::chrono::seconds(5));
  } catch (const GuestAgentError& e) {
    throw GuestExecStartError(e.what());
  }
  const auto pid = started.value("pid", -1);
  if (pid < 0) throw GuestAgentError("guest-exec returned no pid");
  // guest-exec only starts the program; its end is learnt by asking (short sleeps: claims are
  // meant to take well under a second).
  auto pause = std::chrono::milliseconds(5);
  for (;;) {
    const auto status =
        command(agent, {{"execute", "guest-exec-status"}, {"arguments", {{"pid", pid}}}},
                std::chrono::seconds(5));
    if (status.value("exited", false)) {
      output =
          base64_decode(status.value("out-data", "")) + base64_decode(status.value("err-data", ""));
      if (status.contains("signal"))
        throw GuestAgentError(path + " was killed by signal " + status["signal"].dump());
      return status.value("exitcode", -1);
    }
    if (Clock::now() >= deadline)
      throw GuestAgentError(path + " did not finish within " + std::to_string(timeout.count()) +
                            " ms");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(20));
  }
}

void wait_for_agent(const AgentCall& agent, std::chrono::seconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  std::string last;
  for (;;) {
    try {
      command(agent, {{"execute", "guest-ping"}}, std::chrono::seconds(5));
      return;
    } catch (const std::exception& e) {
      last = e.what();
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  throw GuestAgentError("the guest agent did not answer within " +
                        std::to_string(patience.count()) + " s: " + last);
}

void apply_identity(const AgentCall& agent, const GuestIdentity& identity,
                    std::chrono::seconds timeout) {
  check_identity(identity);
  std::string keys;
  for (const auto& key : identity.ssh_keys) keys += key + "\n";
  const auto budget = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
  const auto hash = identity.password_hash.value_or("");
  std::string output;
  if (!identity.previous_user.empty()) {
    // The fast way first; exit 3 (or no perl in the image) means the general way is needed.
    std::optional<int> code;
    try {
      code = guest_exec(agent, "/usr/bin/perl",
                        {"-e", kRenameAccountPerl, "/", identity.username, identity.hostname,
                         identity.previous_user, keys, hash},
                        output, budget);
    } catch (const GuestExecStartError&) {
    }
    if (code == 0) return;
    if (code && *code != 3)
      throw GuestAgentError("giving the guest's " + identity.previous_user + " account to " +
                            identity.username + " failed (exit " + std::to_string(*code) +
                            "): " + output);
  }
  const int code = guest_exec(agent, "/bin/sh",
                              {"-c", kMakeAccountShell, "bowline-claim", identity.username,
                               identity.hostname, identity.previous_user, keys, hash},
                              output, budget);
  if (code != 0)
    throw GuestAgentError("making the guest user " + identity.username + " failed (exit " +
                          std::to_string(code) + "): " + output);
}

}  // namespace bowline::engine
