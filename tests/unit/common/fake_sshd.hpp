// A stand-in for a guest's sshd (libssh's server side), for the browser terminal's tests: it
// takes any public key, grants a PTY and a shell, then echoes what it gets, or stops reading
// altogether: a shell that hangs, whose channel window the client soon fills.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bowline::testing {

enum class SshdMode { Echo, Stall };

struct SshKeyPair {
  std::string private_key;  // OpenSSH format
  std::string public_line;  // "ssh-ed25519 AAAA..."
};
SshKeyPair make_ssh_key();

class FakeSshd {
 public:
  // Listens on `address`:`port` (0: any free port) with `host_key` (OpenSSH private key).
  FakeSshd(const std::string& address, unsigned short port, const std::string& host_key,
           SshdMode mode);
  ~FakeSshd();  // cuts every connection
  FakeSshd(const FakeSshd&) = delete;
  FakeSshd& operator=(const FakeSshd&) = delete;

  unsigned short port() const { return port_; }
  int shells() const { return shells_.load(); }  // shells granted so far
  int connections() const;                       // open now

 private:
  void accept_loop();
  void serve(void* session);

  SshdMode mode_;
  void* bind_ = nullptr;  // ssh_bind: libssh stays in the .cpp
  unsigned short port_ = 0;
  int stop_pipe_[2] = {-1, -1};
  std::atomic<bool> stopping_{false};
  std::atomic<int> shells_{0};
  mutable std::mutex mutex_;
  std::vector<int> open_fds_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace bowline::testing
