#include "api/vnc_bridge.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <deque>
#include <mutex>
#include <thread>

namespace bowline::api {

namespace {
// Above this many unsent bytes towards the browser, stop reading from QEMU until it drains:
// the RFB server then sends less (it only updates what the client asked for).
constexpr std::size_t kHighWater = 2 * 1024 * 1024;
constexpr std::size_t kChunk = 256 * 1024;
}  // namespace

struct VncBridge::State {
  int fd = -1;
  int wake = -1;  // eventfd: input queued or stop requested
  std::shared_ptr<SocketPeer> peer;
  std::mutex mutex;
  std::deque<std::string> input;
  std::size_t input_offset = 0;  // of input.front() already written
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

  void run() {
    std::string buffer(kChunk, '\0');
    for (;;) {
      bool want_write = false;
      {
        std::lock_guard lock(mutex);
        if (stopped) break;
        want_write = !input.empty();
      }
      const bool browser_full = peer->pending() > kHighWater;
      pollfd fds[2] = {
          {fd, static_cast<short>((browser_full ? 0 : POLLIN) | (want_write ? POLLOUT : 0)), 0},
          {wake, POLLIN, 0}};
      // While the browser's queue is full, look again shortly (nothing wakes us when it drains).
      const int n = ::poll(fds, 2, browser_full ? 5 : 1000);
      if (n < 0 && errno != EINTR) break;
      if (peer->closed()) break;
      if (fds[1].revents & POLLIN) {
        std::uint64_t count;
        [[maybe_unused]] auto r = ::read(wake, &count, sizeof count);
      }
      if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        const auto got = ::recv(fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
        if (got == 0) break;  // QEMU closed the display
        if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) break;
        if (got > 0 && !peer->send(buffer.substr(0, static_cast<std::size_t>(got)))) break;
      }
      if (fds[0].revents & POLLOUT) {
        std::lock_guard lock(mutex);
        while (!input.empty()) {
          const auto& front = input.front();
          const auto sent = ::send(fd, front.data() + input_offset, front.size() - input_offset,
                                   MSG_DONTWAIT | MSG_NOSIGNAL);
          if (sent < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
            stopped = true;
            break;
          }
          input_offset += static_cast<std::size_t>(sent);
          if (input_offset < front.size()) break;
          input.pop_front();
          input_offset = 0;
        }
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

VncBridge::VncBridge(int fd, std::shared_ptr<SocketPeer> peer) : state_(std::make_shared<State>()) {
  state_->fd = fd;
  state_->peer = std::move(peer);
  state_->wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (state_->wake < 0) {
    throw std::runtime_error("eventfd failed");
  }
  state_->thread = std::thread([s = state_] { s->run(); });
}

VncBridge::~VncBridge() {
  stop();
  if (state_->thread.joinable()) {
    if (state_->thread.get_id() == std::this_thread::get_id())
      state_->thread.detach();  // the last reference went on the bridge's own thread
    else
      state_->thread.join();
  }
}

void VncBridge::input(std::string bytes) {
  if (bytes.empty()) return;
  {
    std::lock_guard lock(state_->mutex);
    if (state_->stopped) return;
    state_->input.push_back(std::move(bytes));
  }
  state_->signal();
}

void VncBridge::stop() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopped = true;
  }
  state_->signal();
}

}  // namespace bowline::api
