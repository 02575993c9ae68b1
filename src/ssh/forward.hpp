// TCP to a guest on a libvirt host elsewhere, through that host's sshd: the guest's address is
// in a network only the host reaches (a NAT space's), and the host needs nothing but the sshd
// that libvirt's qemu+ssh already uses. The server logs in with the node's key, pins the node's
// host key (no other is accepted, none is learnt) and opens a direct-tcpip channel; a thread
// carries the bytes between that channel and a local socket the caller owns. libssh stays in
// forward.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace bowline::ssh {

// The host's sshd, its key, the login or the channel failed; what() says which.
class ForwardError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ForwardOptions {
  std::string host;  // the node's sshd
  std::uint16_t port = 22;
  std::string user = "root";
  std::string key_file;         // the server's private key for the node (OpenSSH format)
  std::string host_key_public;  // "ssh-ed25519 AAAA...": the node's only accepted host key
  std::string to_host;          // the guest's address, as the node reaches it
  std::uint16_t to_port = 0;
  std::chrono::milliseconds timeout{std::chrono::seconds(10)};  // the setup's, each step
};

// A connected socket (AF_UNIX, for the caller to own and close) whose bytes reach to_host:
// to_port from the node, until either end closes; a half-close passes through. Throws
// ForwardError when the channel cannot be opened.
int open_forward(const ForwardOptions& options);

}  // namespace bowline::ssh
