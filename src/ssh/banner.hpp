// The SSH server's identification line (RFC 4253, 4.2), read before any key exchange: what
// tells an sshd from anything else that accepts a TCP connection (a proxy, a firewall that
// takes every connect, another service on the port).
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace bowline::ssh {

// The first line starting "SSH-" that the peer of the connected `fd` sends within `timeout`
// (without its CR LF). The RFC lets a server send other lines first: they are skipped, up to
// kMaxBeforeBanner bytes in all. nullopt when none came in time, the peer closed first, or it
// sent more than that without one. Reads only (sends nothing); leaves `fd` open.
inline constexpr std::size_t kMaxBeforeBanner = 16 * 1024;
std::optional<std::string> read_identification(int fd, std::chrono::milliseconds timeout);

}  // namespace bowline::ssh
