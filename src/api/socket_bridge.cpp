#include "api/socket_bridge.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <deque>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

namespace bowline::api {

namespace {
// Above this many unsent bytes towards the client, stop reading the socket until it drains
// (an RFB server then sends less; a TCP sender is slowed by the kernel's window).
constexpr std::size_t kHighWater = 2 * 1024 * 1024;
// Above this many bytes from the client not yet written to the socket, stop reading the
// client's frames; below the low mark, read them again.
constexpr std::size_t kInputHighWater = 2 * 1024 * 1024;
constexpr std::size_t kInputLowWater = 512 * 1024;
constexpr std::size_t kChunk = 256 * 1024;
}  // namespace

struct SocketBridge::State {
  int fd = -1;
  int wake = -1;  // eventfd: input queued or stop requested
  std::shared_ptr<SocketPeer> peer;
  BridgeOptions options;
  std::mutex mutex;
  std::deque<std::string> input;
  std::size_t input_offset = 0;  // of input.front() already written
  std::size_t input_bytes = 0;   // queued, not yet written
  bool input_paused = false;
  bool client_done = false;  // the client sent its end (half-close)
  bool sent_fin = false;     // ... and the socket's sending side is shut
  bool socket_done = false;  // the socket's reading side ended (half-close)
  bool stopped = false;
  std::thread thread;

  ~State() {
    if (fd >= 0) ::close(fd);
    if (wake >= 0) ::close(wake);
  }

  void signal() {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake, &one, sizeof one);
  }

  // With the mutex held: writes what it can; false when the socket failed.
  bool flush_locked() {
    while (!input.empty()) {
      const auto& front = input.front();
      const auto sent = ::send(fd, front.data() + input_offset, front.size() - input_offset,
                               MSG_DONTWAIT | MSG_NOSIGNAL);
      if (sent < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
      input_offset += static_cast<std::size_t>(sent);
      input_bytes -= static_cast<std::size_t>(sent);
      if (input_offset < front.size()) break;
      input.pop_front();
      input_offset = 0;
    }
    if (input_paused && input_bytes < kInputLowWater) {
      input_paused = false;
      peer->pause_reading(false);
    }
    if (input.empty() && client_done && !sent_fin) {
      sent_fin = true;
      ::shutdown(fd, SHUT_WR);
    }
    return true;
  }

  // Reads what the socket has; false when the bridge is done.
  bool pump_socket(std::string& buffer) {
    const auto got = ::recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
    if (got < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    if (got > 0) return peer->send(buffer.substr(0, static_cast<std::size_t>(got)));
    if (!options.half_close) return false;  // the display (or the connection) closed
    socket_done = true;
    peer->send(std::string());  // the end of this direction
    std::lock_guard lock(mutex);
    return !sent_fin;
  }

  void run() {
    std::string buffer(kChunk, '\0');
    for (;;) {
      bool want_write = false;
      {
        std::lock_guard lock(mutex);
        if (stopped) break;
        if (socket_done && sent_fin) break;  // both directions ended
        want_write = !input.empty() || (client_done && !sent_fin);
      }
      const bool client_full = peer->pending() > kHighWater;
      const bool want_read = !client_full && !socket_done;
      pollfd fds[2] = {
          {fd, static_cast<short>((want_read ? POLLIN : 0) | (want_write ? POLLOUT : 0)), 0},
          {wake, POLLIN, 0}};
      // While the client's queue is full, look again shortly (nothing wakes us when it drains).
      const int n = ::poll(fds, 2, client_full ? 5 : 1000);
      if (n < 0 && errno != EINTR) break;
      if (peer->closed()) break;
      if (fds[1].revents & POLLIN) {
        std::uint64_t count;
        [[maybe_unused]] auto r = ::read(wake, &count, sizeof count);
      }
      if (want_read && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) && !pump_socket(buffer))
        break;
      // After the peer's end, a hang-up or error means the connection is gone (a reset).
      if (!want_read && socket_done && (fds[0].revents & (POLLHUP | POLLERR))) break;
      if (fds[0].revents & POLLOUT) {
        std::lock_guard lock(mutex);
        if (!flush_locked()) break;
      }
    }
    {
      std::lock_guard lock(mutex);
      stopped = true;
    }
    ::shutdown(fd, SHUT_RDWR);
    peer->close();
  }
};

SocketBridge::SocketBridge(int fd, std::shared_ptr<SocketPeer> peer, BridgeOptions options)
    : state_(std::make_shared<State>()) {
  state_->fd = fd;
  state_->peer = std::move(peer);
  state_->options = options;
  state_->wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (state_->wake < 0) {
    throw std::runtime_error("eventfd failed");
  }
  state_->thread = std::thread([s = state_] { s->run(); });
}

SocketBridge::~SocketBridge() {
  stop();
  if (state_->thread.joinable()) {
    if (state_->thread.get_id() == std::this_thread::get_id())
      state_->thread.detach();  // the last reference went on the bridge's own thread
    else
      state_->thread.join();
  }
}

void SocketBridge::input(std::string bytes) {
  {
    std::lock_guard lock(state_->mutex);
    if (state_->stopped || state_->client_done) return;
    if (bytes.empty()) {
      if (!state_->options.half_close) return;
      state_->client_done = true;
    } else {
      state_->input_bytes += bytes.size();
      state_->input.push_back(std::move(bytes));
      if (!state_->input_paused && state_->input_bytes > kInputHighWater) {
        state_->input_paused = true;
        state_->peer->pause_reading(true);
      }
    }
  }
  state_->signal();
}

void SocketBridge::stop() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopped = true;
  }
  state_->signal();
}

Response bridge_upgrade(int fd, BridgeOptions options,
                        std::function<std::uint64_t(std::shared_ptr<SocketPeer>)> watch,
                        std::function<void(std::uint64_t)> unwatch) {
  struct Session {
    // An upgrade that never happened (a failed handshake) still closes the fd.
    ~Session() {
      if (fd >= 0) ::close(fd);
    }
    int fd = -1;
    std::mutex mutex;
    std::unique_ptr<SocketBridge> bridge;
    std::optional<std::uint64_t> watch;
    bool closed = false;
  };
  auto session = std::make_shared<Session>();
  session->fd = fd;
  auto upgrade = std::make_shared<Upgrade>();
  upgrade->open = [session, options, watch = std::move(watch)](std::shared_ptr<SocketPeer> peer) {
    std::lock_guard lock(session->mutex);
    if (session->closed) return;
    session->watch = watch(peer);
    session->bridge =
        std::make_unique<SocketBridge>(std::exchange(session->fd, -1), std::move(peer), options);
  };
  upgrade->message = [session, filter = options.filter_input](std::string bytes) {
    std::lock_guard lock(session->mutex);
    if (!session->bridge) return;
    if (filter) {
      try {
        bytes = filter(std::move(bytes));
      } catch (const std::exception&) {
        session->bridge->stop();
        return;
      }
      if (bytes.empty()) return;  // all dropped (never a half-close)
    }
    session->bridge->input(std::move(bytes));
  };
  upgrade->close = [session, unwatch = std::move(unwatch)] {
    std::unique_ptr<SocketBridge> bridge;
    {
      std::lock_guard lock(session->mutex);
      session->closed = true;
      bridge = std::move(session->bridge);
      if (session->watch) unwatch(*session->watch);
    }
    bridge.reset();  // joins its thread, outside the lock
  };
  Response response;
  response.upgrade = std::move(upgrade);
  return response;
}

}  // namespace bowline::api
