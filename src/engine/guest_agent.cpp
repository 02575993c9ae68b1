#include "engine/guest_agent.hpp"

#include <openssl/evp.h>

#include <cctype>

#include <nlohmann/json.hpp>
#include <thread>

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

// Runs as root in the guest; the values arrive as positional parameters, never spliced into
// the script. Mirrors the user cloud-init makes for the owner: bash, passwordless sudo, the
// keys, the password hash. Everything is one guest-exec with as few processes as the shell
// allows, because under emulation each exec costs tens of milliseconds and a claim is meant to
// take well under a second: the host name is written to /proc rather than through hostname(1)
// or hostnamectl (which wakes systemd-hostnamed over D-Bus: seconds on a busy guest), files are
// written by the shell, and the password is the hash the seed carries (chpasswd hashing in the
// guest took most of a second).
constexpr const char* kIdentityScript = R"sh(set -e
user=$1 host=$2 old=$3 keys=$4 hash=$5
if ! home=$(getent passwd "$user"); then
  if [ -n "$hash" ]; then useradd -m -s /bin/bash -p "$hash" "$user"
  else useradd -m -s /bin/bash "$user"; fi
  home=$(getent passwd "$user")
elif [ -n "$hash" ]; then
  usermod -p "$hash" "$user"
fi
home=${home#*:*:*:*:*:}; home=${home%%:*}
umask 0227
printf '%s ALL=(ALL) NOPASSWD:ALL\n' "$user" > /etc/sudoers.d/90-bowline-owner
umask 0077
mkdir -p "$home/.ssh"
printf '%s' "$keys" > "$home/.ssh/authorized_keys"
chown -R "$user:" "$home/.ssh"
if [ -n "$host" ]; then
  echo "$host" > /etc/hostname
  echo "$host" > /proc/sys/kernel/hostname
  sed -i -e '/^127\.0\.1\.1[[:space:]]/d' -e "\$a 127.0.1.1 $host" /etc/hosts
fi
# The previous user goes in the background: the owner must not wait for it (userdel alone took
# about a second on an emulated guest), and guest-exec ends when our output pipes close.
if [ -n "$old" ] && [ "$old" != "$user" ] && id -u "$old" >/dev/null 2>&1; then
  setsid sh -c '
    pkill -KILL -u "$1" 2>/dev/null
    userdel -r "$1" 2>/dev/null || userdel "$1"
    for f in /etc/sudoers.d/*; do [ -f "$f" ] && sed -i "/^$1[[:space:]]/d" "$f"; done
  ' bowline-cleanup "$old" </dev/null >/dev/null 2>&1 &
fi
)sh";

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
  const auto started =
      command(agent,
              {{"execute", "guest-exec"},
               {"arguments", {{"path", path}, {"arg", args}, {"capture-output", true}}}},
              std::chrono::seconds(5));
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

void apply_identity(const AgentCall& agent, const GuestIdentity& identity,
                    std::chrono::seconds timeout) {
  check_identity(identity);
  std::string keys;
  for (const auto& key : identity.ssh_keys) keys += key + "\n";
  std::string output;
  const int code =
      guest_exec(agent, "/bin/sh",
                 {"-c", kIdentityScript, "bowline-claim", identity.username, identity.hostname,
                  identity.previous_user, keys, identity.password_hash.value_or("")},
                 output, std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
  if (code != 0)
    throw GuestAgentError("making the guest user " + identity.username + " failed (exit " +
                          std::to_string(code) + "): " + output);
}

}  // namespace bowline::engine
