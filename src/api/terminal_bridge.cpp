#include "api/terminal_bridge.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>

namespace bowline::api {

namespace {

// The shell is used by the pump thread alone, but for interrupt(), which the mutex keeps from
// racing its close.
class TerminalSession : public std::enable_shared_from_this<TerminalSession> {
 public:
  TerminalSession(std::unique_ptr<util::TerminalStream> shell, TerminalLimits limits)
      : shell_(std::move(shell)), limits_(limits) {}
  ~TerminalSession() { stop(); }

  void start(std::shared_ptr<SocketPeer> peer) {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    peer_ = std::move(peer);
    thread_ = std::thread([self = shared_from_this()] { self->pump(); });
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
      if (shell_ && !drop) shell_->interrupt();
    }
    if (drop) drop->close();
  }

  void stop() {
    std::thread thread;
    {
      std::lock_guard lock(mutex_);
      stopped_ = true;
      if (shell_) shell_->interrupt();
      thread = std::move(thread_);
    }
    wake_.notify_all();
    if (thread.joinable() && thread.get_id() != std::this_thread::get_id())
      thread.join();
    else if (thread.joinable())
      thread.detach();
    std::lock_guard lock(mutex_);
    if (shell_) shell_->close();
    shell_.reset();
  }

 private:
  void pump() {
    try {
      while (step()) {
      }
    } catch (const std::exception&) {
      // The shell failed (the guest went away): the client sees the socket close.
    }
    std::shared_ptr<SocketPeer> peer;
    {
      std::lock_guard lock(mutex_);
      peer = peer_;
    }
    if (peer) peer->close();
  }

  // One round: what was typed and resized goes to the shell, then what the shell printed to
  // the client. false when the session is over.
  bool step() {
    std::deque<std::string> typed;
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
      typed.swap(input_);
      queued_ = 0;
      size = std::exchange(resize_, std::nullopt);
    }
    if (peer->closed()) return false;
    if (size) shell_->resize(size->first, size->second);
    for (const auto& t : typed) shell_->write(t);
    auto out = shell_->read(std::chrono::milliseconds(250));
    if (!out.empty()) return peer->send(std::move(out));
    return !shell_->eof();
  }

  std::unique_ptr<util::TerminalStream> shell_;
  const TerminalLimits limits_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::shared_ptr<SocketPeer> peer_;
  std::deque<std::string> input_;
  std::size_t queued_ = 0;
  std::optional<std::pair<unsigned, unsigned>> resize_;
  bool stopped_ = false;
  std::thread thread_;
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
    if (session) session->stop();  // joins the pump, outside the lock
  };
  Response response;
  response.upgrade = std::move(upgrade);
  return response;
}

}  // namespace bowline::api
