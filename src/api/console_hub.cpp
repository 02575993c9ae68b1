#include "api/console_hub.hpp"

#include <deque>
#include <vector>

namespace bowline::api {

using namespace std::chrono_literals;

namespace {
// A viewer that lets this much output pile up unread is dropped rather than buffered for.
constexpr std::size_t kViewerBacklog = 4 * 1024 * 1024;
}  // namespace

struct ConsoleHub::Console {
  std::string key;
  std::shared_ptr<util::ByteStream> writer_stream;  // the open stream, for the writer
  std::string scrollback;
  std::map<std::uint64_t, std::shared_ptr<SocketPeer>> viewers;
  std::deque<std::string> input;
  std::size_t queued = 0;  // bytes in `input`
  std::condition_variable input_ready;
  std::condition_variable stream_changed;
  util::Timer::TimePoint last_viewer_left;
  std::uint64_t opens = 0;
  bool ended = false;    // the threads are leaving (no new viewers join this object)
  bool writing = false;  // someone is sending input to the stream: the rest waits its turn
  std::thread pump, writer;
};

ConsoleHub::ConsoleHub(Opener open, std::size_t scrollback, std::chrono::milliseconds linger,
                       util::Timer& timer, std::size_t input_limit)
    : open_(std::move(open)),
      scrollback_(scrollback),
      linger_(linger),
      timer_(timer),
      input_limit_(input_limit) {}

ConsoleHub::~ConsoleHub() {
  std::map<std::string, std::shared_ptr<Console>> consoles;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    consoles = consoles_;
    for (auto& old : retired_) consoles.emplace("~" + std::to_string(consoles.size()), old);
    for (auto& [name, console] : consoles) {
      console->input_ready.notify_all();
      console->stream_changed.notify_all();
    }
  }
  for (auto& [name, console] : consoles) {
    if (console->pump.joinable()) console->pump.join();
    if (console->writer.joinable()) console->writer.join();
  }
}

std::uint64_t ConsoleHub::attach(const std::string& key, std::shared_ptr<SocketPeer> peer) {
  std::lock_guard lock(mutex_);
  auto& console = consoles_[key];
  if (console && console->ended) {
    // Its threads are on their way out: let them go and start afresh.
    retired_.push_back(std::move(console));  // joined by the destructor
    console.reset();
  }
  const auto id = next_viewer_++;
  if (!console) {
    console = std::make_shared<Console>();
    console->key = key;
    console->viewers.emplace(id, peer);
    console->pump = std::thread([this, c = console] { pump(c); });
    console->writer = std::thread([this, c = console] { write_loop(c); });
  } else {
    console->viewers.emplace(id, peer);
  }
  // Under the lock that fan-out takes too: the scrollback and what follows join seamlessly.
  if (!console->scrollback.empty()) peer->send(console->scrollback);
  return id;
}

bool ConsoleHub::input(const std::string& key, std::string bytes) {
  std::shared_ptr<Console> console;
  std::shared_ptr<util::ByteStream> stream;
  {
    std::lock_guard lock(mutex_);
    const auto it = consoles_.find(key);
    if (it == consoles_.end() || bytes.empty()) return true;
    console = it->second;
    if (console->queued + bytes.size() > input_limit_) return false;
    if (console->writing || !console->input.empty() || !console->writer_stream) {
      console->queued += bytes.size();
      console->input.push_back(std::move(bytes));
      console->input_ready.notify_all();
      return true;
    }
    // Nothing queued and nobody writing: send from this thread what the stream takes at once,
    // sparing a keystroke the hand-over to the writer thread (a wake-up that a busy host can
    // delay by milliseconds).
    console->writing = true;
    stream = console->writer_stream;
  }
  std::size_t sent = 0;
  try {
    sent = stream->write_now(bytes);
  } catch (const std::exception&) {
    sent = 0;  // the writer's write() meets the failure and handles it
  }
  std::lock_guard lock(mutex_);
  console->writing = false;
  if (sent < bytes.size()) {
    console->queued += bytes.size() - sent;
    console->input.push_front(bytes.substr(sent));
  }
  if (!console->input.empty()) console->input_ready.notify_all();
  return true;
}

void ConsoleHub::detach(const std::string& key, std::uint64_t viewer) {
  std::lock_guard lock(mutex_);
  const auto it = consoles_.find(key);
  if (it == consoles_.end()) return;
  if (it->second->viewers.erase(viewer) && it->second->viewers.empty())
    it->second->last_viewer_left = timer_.now();
}

std::size_t ConsoleHub::viewers(const std::string& key) {
  std::lock_guard lock(mutex_);
  const auto it = consoles_.find(key);
  return it == consoles_.end() ? 0 : it->second->viewers.size();
}

std::uint64_t ConsoleHub::opens(const std::string& key) {
  std::lock_guard lock(mutex_);
  const auto it = consoles_.find(key);
  return it == consoles_.end() ? 0 : it->second->opens;
}

void ConsoleHub::pump(const std::shared_ptr<Console>& console) {
  std::shared_ptr<util::ByteStream> stream;
  auto retry_delay = 200ms;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      const bool idle =
          console->viewers.empty() && timer_.now() - console->last_viewer_left >= linger_;
      if (stopping_ || idle) {
        console->ended = true;
        console->writer_stream.reset();
        console->input_ready.notify_all();
        for (auto& [id, peer] : console->viewers) peer->close();
        break;
      }
    }
    if (!stream) {
      try {
        stream = open_(console->key);
        if (!stream) {  // the space is gone: so is its console, with every viewer
          std::lock_guard lock(mutex_);
          console->ended = true;
          console->writer_stream.reset();
          console->input_ready.notify_all();
          for (auto& [id, peer] : console->viewers) peer->close();
          console->viewers.clear();
          break;
        }
        retry_delay = 200ms;
        std::lock_guard lock(mutex_);
        ++console->opens;
        console->writer_stream = stream;
        console->input_ready.notify_all();
      } catch (const std::exception&) {
        // Not running (yet): a restart in progress, or libvirtd away. Try again shortly.
        std::unique_lock lock(mutex_);
        console->stream_changed.wait_for(lock, retry_delay, [&] { return stopping_; });
        retry_delay = std::min(retry_delay * 2, std::chrono::milliseconds(2s));
        continue;
      }
    }
    std::string data;
    try {
      data = stream->read(250ms);
    } catch (const std::exception&) {
      data.clear();
    }
    if (data.empty()) {
      if (stream->eof()) {
        std::lock_guard lock(mutex_);
        console->writer_stream.reset();
        stream.reset();
      }
      continue;
    }
    std::lock_guard lock(mutex_);
    console->scrollback += data;
    if (console->scrollback.size() > scrollback_)
      console->scrollback.erase(0, console->scrollback.size() - scrollback_);
    for (auto it = console->viewers.begin(); it != console->viewers.end();) {
      auto& peer = it->second;
      if (peer->pending() > kViewerBacklog || !peer->send(data)) {
        peer->close();
        it = console->viewers.erase(it);
        if (console->viewers.empty()) console->last_viewer_left = timer_.now();
      } else {
        ++it;
      }
    }
  }
  if (stream) stream->close();
}

void ConsoleHub::write_loop(const std::shared_ptr<Console>& console) {
  for (;;) {
    std::string bytes;
    std::shared_ptr<util::ByteStream> stream;
    {
      std::unique_lock lock(mutex_);
      console->input_ready.wait(lock, [&] {
        return console->ended || stopping_ ||
               (!console->input.empty() && console->writer_stream && !console->writing);
      });
      if (console->ended || stopping_) return;
      bytes = std::move(console->input.front());
      console->input.pop_front();
      console->queued -= bytes.size();
      stream = console->writer_stream;
      console->writing = true;
    }
    try {
      stream->write(bytes);
    } catch (const std::exception&) {
      // The stream ended under us; the pump reopens it. Keystrokes of that moment are lost.
    }
    std::lock_guard lock(mutex_);
    console->writing = false;
  }
}

}  // namespace bowline::api
