// An interactive shell in a guest over SSH, as the server's own client (the browser terminal):
// libssh on a TCP connection the caller opened, the guest's host key pinned (no other key is
// accepted, none is learnt), public-key login with a key the server holds, a PTY of the
// browser's size. libssh stays inside shell.cpp.
#pragma once

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "util/byte_stream.hpp"

namespace bowline::ssh {

// The connection, the host key or the login failed; what() says which, in libssh's words.
class ShellError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ShellOptions {
  std::string user;
  std::string private_key;      // the client's, OpenSSH private key format (unencrypted)
  std::string host_key_public;  // "ssh-ed25519 AAAA... comment": the only key accepted
  unsigned cols = 80;
  unsigned rows = 24;
  std::string term = "xterm-256color";
  std::chrono::milliseconds timeout{std::chrono::seconds(15)};  // each step of the setup
};

// Takes ownership of `fd`, a connected TCP socket to the guest's SSH server, and returns its
// shell once the key exchange, the host key check, the login, the PTY and the shell request
// have all succeeded. Throws ShellError otherwise (the fd is closed).
std::unique_ptr<util::TerminalStream> open_shell(int fd, const ShellOptions& options);

}  // namespace bowline::ssh
