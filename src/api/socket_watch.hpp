// WebSockets into a space (console, display, tunnel) stay open only while what let them open
// still holds: the credential (a logout or a revoked token ends it), the user and their
// permission, the space (stopped or deleted ends it), its template's rules. Rather than every
// place that changes one of these knowing about sockets, a thread asks each open socket's own
// check again a few times a second and closes the ones that fail: within a second, whatever
// changed and however.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

namespace bowline::api {

class SocketWatch {
 public:
  using Check = std::function<bool()>;  // true: still allowed; must not block for long
  explicit SocketWatch(std::chrono::milliseconds interval = std::chrono::milliseconds(250));
  ~SocketWatch();
  SocketWatch(const SocketWatch&) = delete;
  SocketWatch& operator=(const SocketWatch&) = delete;

  // Watches a socket until remove(); `close` is called (once, on the watch's thread) when
  // `still_allowed` answers false or throws.
  std::uint64_t add(Check still_allowed, std::function<void()> close);
  void remove(std::uint64_t id);
  std::size_t watched() const;

 private:
  struct Entry {
    Check still_allowed;
    std::function<void()> close;
  };
  void run();

  std::chrono::milliseconds interval_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::uint64_t, Entry> entries_;
  std::uint64_t next_ = 1;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace bowline::api
