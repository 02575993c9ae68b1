// A bidirectional byte stream: a domain's serial console, a shell in the guest. The web
// console pumps bytes between one of these and a WebSocket; tests substitute a socketpair.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace bowline::util {

class ByteStream {
 public:
  virtual ~ByteStream() = default;

  // Waits up to `timeout` for bytes and returns what has arrived (at most `max` bytes). An
  // empty result means nothing arrived in time, or the stream has ended: see eof(). Throws
  // (HypervisorError for a libvirt stream) when the stream failed.
  virtual std::string read(std::chrono::milliseconds timeout, std::size_t max = 64 * 1024) = 0;

  // Sends all of `data`, waiting while the other side cannot take more. Throws when the stream
  // has ended or failed.
  virtual void write(std::string_view data) = 0;

  // Sends what the stream takes at once, without waiting, and says how many bytes that was:
  // 0 when it takes nothing now, or cannot tell without waiting (the default); write() then
  // sends the rest. For callers that must not block, to skip handing bytes to a writer thread.
  virtual std::size_t write_now(std::string_view data) {
    static_cast<void>(data);
    return 0;
  }

  // True once the other side has closed the stream (or it failed) and every byte that arrived
  // before that has been read.
  virtual bool eof() const = 0;

  // Ends the stream; later reads return nothing and writes throw. Idempotent; the destructor
  // closes too.
  virtual void close() = 0;
};

// A terminal session (a shell over SSH): a byte stream with a size. Used by one thread, but
// for interrupt() and abort().
class TerminalStream : public ByteStream {
 public:
  // The window's new size in character cells; the guest's programs see SIGWINCH.
  virtual void resize(unsigned cols, unsigned rows) = 0;
  // Ends a read() that is waiting now, at once, from any thread (new input to send).
  virtual void interrupt() = 0;
  // From any thread: cuts the connection under the stream, so that whatever its thread does
  // with it now or next returns at once (a guest that stopped reading cannot keep it).
  virtual void abort() { interrupt(); }
};

}  // namespace bowline::util
