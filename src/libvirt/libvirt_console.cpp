// A domain console as a util::ByteStream. The stream is non-blocking: libvirt's event loop calls
// on_stream_event when bytes can be read (they go into a bounded buffer that read() drains)
// or written (a writer that found the stream full is woken). No libvirt call is made while
// one of our mutexes other than `events_mutex` is held, so the event thread and callers
// never wait on each other inside libvirt.
#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <utility>

#include "libvirt/libvirt_handles.hpp"

namespace bowline::libvirt::detail {
namespace {

using namespace std::chrono_literals;

constexpr std::size_t kBufferLimit = 1024 * 1024;  // stop reading from libvirt above this
constexpr int kRecvChunk = 16 * 1024;

struct ConsoleState {
  explicit ConsoleState(virStreamPtr s, std::string subj) : stream(s), subject(std::move(subj)) {
    virStreamRef(stream);  // ours until the last of the console and the callback is gone
  }
  ~ConsoleState() { virStreamFree(stream); }
  ConsoleState(const ConsoleState&) = delete;
  ConsoleState& operator=(const ConsoleState&) = delete;

  virStreamPtr stream;
  const std::string subject;

  std::mutex mutex;  // guards the fields below
  std::condition_variable changed;
  std::string buffer;
  bool ended = false;   // the other side closed or the stream failed
  bool closed = false;  // close() was called
  std::optional<HypervisorError> failure;
  bool want_write = false;
  bool writable = false;

  std::mutex events_mutex;  // serialises virStreamEventUpdateCallback; guards the two below
  bool registered = false;
  int mask = 0;

  void end(std::optional<HypervisorError> error) {
    std::lock_guard lock(mutex);
    ended = true;
    if (error && !failure) failure = std::move(error);
    changed.notify_all();
  }

  // Asks libvirt for the events we want now: reads while the buffer has room, writes while
  // a writer waits, nothing once the stream has ended.
  void update_events() {
    std::lock_guard events(events_mutex);
    if (!registered) return;
    int wanted = 0;
    {
      std::lock_guard lock(mutex);
      if (!ended && !closed) {
        wanted = VIR_STREAM_EVENT_ERROR | VIR_STREAM_EVENT_HANGUP;
        if (buffer.size() < kBufferLimit) wanted |= VIR_STREAM_EVENT_READABLE;
        if (want_write) wanted |= VIR_STREAM_EVENT_WRITABLE;
      }
    }
    if (wanted == mask) return;
    const bool updated = virStreamEventUpdateCallback(stream, wanted) == 0;
    mask = wanted;  // not retried: a stream that refuses has ended (the callback stays ours
                    // to remove in close())
    if (!updated) {
      auto error = last_error(subject, "watch the console");
      if (wanted != 0) end(std::move(error));
    }
  }

  void on_readable() {
    char chunk[kRecvChunk];
    for (;;) {
      {
        std::lock_guard lock(mutex);
        if (buffer.size() >= kBufferLimit || closed) return;
      }
      const int n = virStreamRecv(stream, chunk, sizeof chunk);
      if (n > 0) {
        std::lock_guard lock(mutex);
        buffer.append(chunk, static_cast<std::size_t>(n));
        changed.notify_all();
        continue;
      }
      if (n == -2) return;  // drained for now
      if (n == 0)
        end(std::nullopt);
      else
        end(last_error(subject, "read the console"));
      return;
    }
  }
};

void on_stream_event(virStreamPtr, int events, void* opaque) noexcept {
  try {
    auto& state = **static_cast<std::shared_ptr<ConsoleState>*>(opaque);
    if (events & VIR_STREAM_EVENT_READABLE) state.on_readable();
    if (events & VIR_STREAM_EVENT_WRITABLE) {
      std::lock_guard lock(state.mutex);
      state.writable = true;
      state.want_write = false;
      state.changed.notify_all();
    }
    if (events & VIR_STREAM_EVENT_ERROR)
      state.end(HypervisorError(state.subject + ": the console stream failed"));
    else if (events & VIR_STREAM_EVENT_HANGUP)
      state.end(std::nullopt);
    state.update_events();
  } catch (...) {
    // Nothing sensible to do on the event thread; the reader sees no more data.
  }
}

void free_state(void* opaque) noexcept {
  delete static_cast<std::shared_ptr<ConsoleState>*>(opaque);
}

// Frees the callback's opaque once no dispatch can still be using it. libvirt 9.0's remote
// driver never calls a stream callback's free function (remoteStreamCallbackFree tests
// `!cbdata->cb`, which is never true), and a dispatch already under way on the event thread
// may still run the callback after virStreamEventRemoveCallback returns. So libvirt gets no
// free function and the opaque is freed by a one-shot timeout: it runs on the event thread,
// after whatever dispatch was in progress there.
void release_after_dispatch(std::shared_ptr<ConsoleState>* opaque) {
  if (!opaque) return;
  const int timer = virEventAddTimeout(
      0, [](int self, void*) { virEventRemoveTimeout(self); }, opaque, free_state);
  if (timer < 0) {
    virResetLastError();
    delete opaque;  // no event loop: nothing can be dispatching
  }
}

class LibvirtConsole final : public util::ByteStream {
 public:
  LibvirtConsole(Stream stream, Connection connection, std::string subject)
      : connection_(std::move(connection)),
        stream_(std::move(stream)),
        state_(std::make_shared<ConsoleState>(stream_.get(), std::move(subject))) {
    std::lock_guard events(state_->events_mutex);
    const int mask = VIR_STREAM_EVENT_READABLE | VIR_STREAM_EVENT_ERROR | VIR_STREAM_EVENT_HANGUP;
    auto* opaque = new std::shared_ptr<ConsoleState>(state_);
    if (virStreamEventAddCallback(stream_.get(), mask, on_stream_event, opaque, nullptr) < 0) {
      auto error = last_error(state_->subject, "watch the console");
      delete opaque;
      virStreamAbort(stream_.get());
      virResetLastError();
      throw error;
    }
    opaque_ = opaque;
    state_->registered = true;
    state_->mask = mask;
  }

  ~LibvirtConsole() override { close(); }

  std::string read(std::chrono::milliseconds timeout, std::size_t max) override {
    std::string out;
    bool quiet = false;
    {
      std::unique_lock lock(state_->mutex);
      state_->changed.wait_for(lock, timeout, [&] {
        return !state_->buffer.empty() || state_->ended || state_->closed;
      });
      if (state_->buffer.empty()) {
        if (state_->failure && !state_->closed) throw *state_->failure;
        quiet = !state_->ended && !state_->closed;
      } else {
        const auto n = std::min(max, state_->buffer.size());
        out.assign(state_->buffer, 0, n);
        state_->buffer.erase(0, n);
      }
    }
    if (quiet) {
      // When libvirtd drops the connection (a restart, virt-admin client-disconnect) its
      // streams get no event at all: only the connection knows. A local check, no round trip.
      if (virConnectIsAlive(connection_.get()) == 0) {
        virResetLastError();
        HypervisorError lost(state_->subject + ": the connection to libvirtd was lost");
        state_->end(lost);
        throw lost;
      }
      virResetLastError();
      return {};
    }
    state_->update_events();  // room again: resume reading if it had stopped
    return out;
  }

  void write(std::string_view data) override {
    std::lock_guard writer(write_mutex_);
    while (!data.empty()) {
      {
        std::lock_guard lock(state_->mutex);
        if (state_->closed || state_->ended) {
          if (state_->failure) throw *state_->failure;
          throw HypervisorError(state_->subject + ": cannot write to the console: it is closed");
        }
      }
      const auto chunk = std::min<std::size_t>(data.size(), kRecvChunk);
      const int n = virStreamSend(stream_.get(), data.data(), chunk);
      if (n > 0) {
        data.remove_prefix(static_cast<std::size_t>(n));
        continue;
      }
      if (n != -2) throw last_error(state_->subject, "write to the console");
      {
        std::lock_guard lock(state_->mutex);
        state_->want_write = true;
        state_->writable = false;
      }
      state_->update_events();
      std::unique_lock lock(state_->mutex);
      state_->changed.wait_for(lock, 1s,
                               [&] { return state_->writable || state_->ended || state_->closed; });
    }
  }

  std::size_t write_now(std::string_view data) override {
    // A writer already at work (perhaps waiting for room) goes first, in order.
    std::unique_lock writer(write_mutex_, std::try_to_lock);
    if (!writer.owns_lock() || data.empty()) return 0;
    {
      std::lock_guard lock(state_->mutex);
      if (state_->closed || state_->ended) return 0;  // write() reports it
    }
    // The stream is non-blocking: virStreamSend queues the bytes or says -2 (full).
    const int n =
        virStreamSend(stream_.get(), data.data(), std::min<std::size_t>(data.size(), kRecvChunk));
    if (n > 0) return static_cast<std::size_t>(n);
    if (n != -2) virResetLastError();  // write() meets the failure again and reports it
    return 0;
  }

  bool eof() const override {
    std::lock_guard lock(state_->mutex);
    return (state_->ended || state_->closed) && state_->buffer.empty();
  }

  void close() override {
    {
      std::lock_guard lock(state_->mutex);
      if (state_->closed) return;
      state_->closed = true;
      state_->buffer.clear();
      state_->changed.notify_all();
    }
    {
      std::lock_guard events(state_->events_mutex);
      if (state_->registered) virStreamEventRemoveCallback(stream_.get());
      state_->registered = false;
    }
    release_after_dispatch(std::exchange(opaque_, nullptr));
    virStreamAbort(stream_.get());  // as virsh console does; fails harmlessly if it ended
    virResetLastError();
  }

 private:
  Connection connection_;
  Stream stream_;
  std::shared_ptr<ConsoleState> state_;
  std::mutex write_mutex_;
  std::shared_ptr<ConsoleState>* opaque_ = nullptr;  // the stream callback's
};

}  // namespace

std::unique_ptr<util::ByteStream> make_console_stream(Stream stream, Connection connection,
                                                      std::string subject) {
  return std::make_unique<LibvirtConsole>(std::move(stream), std::move(connection),
                                          std::move(subject));
}

}  // namespace bowline::libvirt::detail
