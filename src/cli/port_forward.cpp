#include "cli/port_forward.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "cli/local_sockets.hpp"
#include "cli/tls_trust.hpp"
#include "cli/tunnel_pipe.hpp"
#include "cli/ws_client.hpp"

namespace bowline::cli {

namespace {

// The first final refusal any connection met; the main thread rethrows it.
class Ending {
 public:
  void end(std::exception_ptr why) {
    {
      std::lock_guard lock(mutex_);
      if (!why_) why_ = std::move(why);
    }
    ended_.notify_all();
  }
  [[noreturn]] void wait() {
    std::unique_lock lock(mutex_);
    ended_.wait(lock, [this] { return why_ != nullptr; });
    std::rethrow_exception(why_);
  }

 private:
  std::mutex mutex_;
  std::condition_variable ended_;
  std::exception_ptr why_;
};

// std::cerr is shared by every connection's thread: one line at a time.
std::mutex print_mutex;

void say(const std::string& line) {
  std::lock_guard lock(print_mutex);
  std::cerr << line << std::endl;
}

// One local connection, one tunnel; a refusal is reported and, when final, ends it all.
void carry(int fd, const Endpoint& endpoint, const std::string& path, const std::string& what,
           const std::shared_ptr<Ending>& ending) {
  try {
    splice_tunnel(endpoint, path, fd, fd, true);
  } catch (const std::exception& e) {
    if (forward_error_is_final(e)) {
      ending->end(std::current_exception());
    } else {
      say("bowline: a connection to " + what + " failed: " + e.what() +
          " (still forwarding; the next connection tries again)");
    }
  }
  ::close(fd);
}

}  // namespace

bool forward_error_is_final(const std::exception& e) {
  if (dynamic_cast<const CertificateError*>(&e)) return true;
  if (const auto* api = dynamic_cast<const ApiError*>(&e)) {
    const auto status = api->status();
    return status == 401 || status == 403 || status == 404;
  }
  return false;
}

void forward_ports(const Endpoint& endpoint, const ForwardTarget& target) {
  auto ending = std::make_shared<Ending>();
  for (const auto& [local, remote] : target.ports) {
    const auto path = tunnel_path(target.space_id, remote);
    const auto what = target.space_name + ":" + std::to_string(remote);
    // A refusal that no retry changes (a port the template does not list) shows now; the
    // guest not listening yet does not stop the forward.
    try {
      WsConnection probe(endpoint, path);
    } catch (const std::exception& e) {
      if (forward_error_is_final(e)) throw;
      say("bowline: " + what + " is not reachable yet: " + e.what() +
          " (forwarding anyway; each connection tries again)");
    }
    const int listener = listen_loopback(local);
    std::cout << "http://127.0.0.1:" << bound_port(listener) << " -> " << what << std::endl;
    std::thread([listener, path, what, endpoint, ending] {
      for (;;) {
        const int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {
          if (errno == EINTR || errno == ECONNABORTED) continue;
          return;
        }
        std::thread(carry, fd, endpoint, path, what, ending).detach();
      }
    }).detach();
  }
  std::cout << "Forwarding (Ctrl-C ends)" << std::endl;
  ending->wait();
}

}  // namespace bowline::cli
