// Byte streams for the access benchmarks, as a client sees them: a plain socket (straight to
// QEMU's VNC server, or to a console) or a WebSocket to a bowline route whose binary frames
// carry the same bytes. Blocking; one reader and one writer.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace bowline::bench {

class BytePipe {
 public:
  virtual ~BytePipe() = default;
  virtual void write_all(std::string_view bytes) = 0;
  // Up to `max` bytes into `out`, waiting up to `timeout` (0 on timeout); throws on end of stream.
  virtual std::size_t read_some(char* out, std::size_t max, std::chrono::milliseconds timeout) = 0;

  // Exactly `n` bytes (throws on timeout or end of stream).
  void read_exact(char* out, std::size_t n, std::chrono::milliseconds timeout);
  std::string read_exact(std::size_t n, std::chrono::milliseconds timeout);
  // Reads and drops `n` bytes through a scratch buffer (the framebuffer's pixels).
  void skip(std::size_t n, std::chrono::milliseconds timeout);

 private:
  std::string scratch_;
};

// Owns `fd` (a connected stream socket).
class FdPipe final : public BytePipe {
 public:
  explicit FdPipe(int fd) : fd_(fd) {}
  ~FdPipe() override;
  FdPipe(const FdPipe&) = delete;
  FdPipe& operator=(const FdPipe&) = delete;
  void write_all(std::string_view bytes) override;
  std::size_t read_some(char* out, std::size_t max, std::chrono::milliseconds timeout) override;

 private:
  int fd_;
};

// A WebSocket client on TCP (TCP_NODELAY): binary frames out (masked, as a browser sends them),
// the payloads of the server's frames in as one stream of bytes.
class WsPipe final : public BytePipe {
 public:
  // `server` is http://HOST:PORT; `token` an API token (sent as a Bearer header).
  WsPipe(const std::string& server, const std::string& path, const std::string& token);
  ~WsPipe() override;
  WsPipe(const WsPipe&) = delete;
  WsPipe& operator=(const WsPipe&) = delete;
  void write_all(std::string_view bytes) override;  // one binary frame
  std::size_t read_some(char* out, std::size_t max, std::chrono::milliseconds timeout) override;

 private:
  // Waits for at least one more byte from the socket into in_.
  void fill(std::chrono::milliseconds timeout);
  int fd_ = -1;
  std::string in_;              // received, not yet parsed or delivered
  std::size_t in_at_ = 0;       // parse position in in_
  std::size_t frame_left_ = 0;  // payload bytes of the current data frame still to deliver
  std::string out_;             // frame being built
};

}  // namespace bowline::bench
