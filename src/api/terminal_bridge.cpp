#include "api/terminal_bridge.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

namespace bowline::api {

namespace {

// The shell is used by the pump thread alone, but for interrupt() and abort(), which are safe
// from any thread. The pump holds the session: stop() never waits for it (a guest that stopped
// reading must not keep the thread that closes the socket), it cuts the SSH connection and the
// pump ends on its own.
class TerminalSession : public std::enable_shared_from_this<TerminalSession> {
 public:
  TerminalSession(std::unique_ptr<util::TerminalStream> shell, TerminalLimits limits)
      : shell_(std::move(shell)), limits_(limits) {}
  ~TerminalSession() {
    if (shell_) shell_->close();
  }

  void start(std::shared_ptr<SocketPeer> peer) {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    peer_ = std::move(peer);
    std::thread([self = shared_from_this()] { self->pump(); }).detach();
  }

  // A frame from the client (an I/O thread: never blocks).
  void message(const std::string& bytes) {
    auto frame = decode_terminal_frame(bytes);
    if (frame.kind == TerminalFrame::Kind::Ignored) return;
    std::shared_ptr<SocketPeer> drop;
    {
      std::lock_guard lock(mutex_);
      if (stopped_) return;
      if (frame.kind == TerminalFrame::Kind::Input) {
        if (queued_ + frame.input.size() > limits_.input_limit) {
          drop = peer_;  // typing faster than the shell reads, for a megabyte
        } else {
          queued_ += frame.input.size();
          input_.push_back(std::move(frame.input));
        }
      } else {
        resize_ = std::make_pair(frame.cols, frame.rows);
      }
    }
    if (drop)
      drop->close();
    else
      shell_->interrupt();
  }

  // Any thread; returns at once.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      if (stopped_) return;
      stopped_ = true;
    }
    wake_.notify_all();
    shell_->abort();
  }

 private:
  void pump() {
    try {
      while (step()) {
      }
    } catch (const std::exception&) {
      // The shell failed (the guest went away, or stop() cut it): the client sees the close.
    }
    std::shared_ptr<SocketPeer> peer;
    {
      std::lock_guard lock(mutex_);
      peer = peer_;
    }
    if (peer) peer->close();
  }

  // One round: what was typed and resized goes to the shell, as far as it takes it now, then
  // what the shell printed to the client. false when the session is over.
  bool step() {
    std::optional<std::pair<unsigned, unsigned>> size;
    std::shared_ptr<SocketPeer> peer;
    {
      std::unique_lock lock(mutex_);
      if (stopped_) return false;
      peer = peer_;
      if (peer->pending() > limits_.output_high_water) {
        wake_.wait_for(lock, std::chrono::milliseconds(20));
        return !stopped_ && !peer->closed();
      }
      for (auto& typed : input_) unwritten_ += typed;
      input_.clear();
      size = std::exchange(resize_, std::nullopt);
    }
    if (peer->closed()) return false;
    if (size) shell_->resize(size->first, size->second);
    write_typed();
    auto out = shell_->read(std::chrono::milliseconds(250));
    if (!out.empty()) return peer->send(std::move(out));
    return !shell_->eof();
  }

  // What the shell takes without waiting; the rest waits for the guest's window (a guest that
  // stopped reading leaves it queued, counted against the input limit).
  void write_typed() {
    std::size_t written = 0;
    while (written < unwritten_.size()) {
      const auto n = shell_->write_now(std::string_view(unwritten_).substr(written));
      if (n == 0) break;
      written += n;
    }
    if (written == 0) return;
    unwritten_.erase(0, written);
    std::lock_guard lock(mutex_);
    queued_ -= written;
  }

  const std::unique_ptr<util::TerminalStream> shell_;
  const TerminalLimits limits_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::shared_ptr<SocketPeer> peer_;
  std::deque<std::string> input_;
  std::string unwritten_;   // the pump's: taken from input_, not yet taken by the shell
  std::size_t queued_ = 0;  // typed and not yet taken by the shell (input_ and unwritten_)
  std::optional<std::pair<unsigned, unsigned>> resize_;
  bool stopped_ = false;
};

}  // namespace

Response terminal_upgrade(std::unique_ptr<util::TerminalStream> shell, TerminalLimits limits,
                          std::function<std::uint64_t(std::shared_ptr<SocketPeer>)> watch,
                          std::function<void(std::uint64_t)> unwatch) {
  struct Hold {
    std::mutex mutex;
    std::shared_ptr<TerminalSession> session;
    std::optional<std::uint64_t> watch;
    bool closed = false;
  };
  auto hold = std::make_shared<Hold>();
  // A handshake that never happens still ends the shell (the session's destructor).
  hold->session = std::make_shared<TerminalSession>(std::move(shell), limits);
  auto upgrade = std::make_shared<Upgrade>();
  upgrade->open = [hold, watch = std::move(watch)](std::shared_ptr<SocketPeer> peer) {
    std::lock_guard lock(hold->mutex);
    if (hold->closed || !hold->session) return;
    hold->watch = watch(peer);
    hold->session->start(std::move(peer));
  };
  upgrade->message = [hold](std::string frame) {
    std::shared_ptr<TerminalSession> session;
    {
      std::lock_guard lock(hold->mutex);
      session = hold->session;
    }
    if (session) session->message(frame);
  };
  upgrade->close = [hold, unwatch = std::move(unwatch)] {
    std::shared_ptr<TerminalSession> session;
    {
      std::lock_guard lock(hold->mutex);
      hold->closed = true;
      session = std::move(hold->session);
      if (hold->watch) unwatch(*hold->watch);
    }
    if (session) session->stop();  // returns at once: the pump ends by itself
  };
  Response response;
  response.upgrade = std::move(upgrade);
  return response;
}

}  // namespace bowline::api
