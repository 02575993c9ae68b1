#include "byte_pipe.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace bowline::bench {

namespace {

int wait_readable(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  for (;;) {
    const int n = ::poll(&p, 1, static_cast<int>(timeout.count()));
    if (n >= 0) return n;
    if (errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
  }
}

void send_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const auto n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {  // util::tcp_connect's sockets do not block
        pollfd p{fd, POLLOUT, 0};
        ::poll(&p, 1, 1000);
        continue;
      }
      throw std::runtime_error(std::string("send: ") + std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

}  // namespace

void BytePipe::read_exact(char* out, std::size_t n, std::chrono::milliseconds timeout) {
  while (n > 0) {
    const auto got = read_some(out, n, timeout);
    if (got == 0) throw std::runtime_error("no bytes within the timeout");
    out += got;
    n -= got;
  }
}

std::string BytePipe::read_exact(std::size_t n, std::chrono::milliseconds timeout) {
  std::string out(n, '\0');
  read_exact(out.data(), n, timeout);
  return out;
}

void BytePipe::skip(std::size_t n, std::chrono::milliseconds timeout) {
  scratch_.resize(256 * 1024);
  while (n > 0) {
    const auto got = read_some(scratch_.data(), std::min(n, scratch_.size()), timeout);
    if (got == 0) throw std::runtime_error("no bytes within the timeout");
    n -= got;
  }
}

FdPipe::~FdPipe() {
  if (fd_ >= 0) ::close(fd_);
}

void FdPipe::write_all(std::string_view bytes) {
  send_all(fd_, bytes);
}

std::size_t FdPipe::read_some(char* out, std::size_t max, std::chrono::milliseconds timeout) {
  if (wait_readable(fd_, timeout) == 0) return 0;
  for (;;) {
    const auto n = ::recv(fd_, out, max, 0);
    if (n > 0) return static_cast<std::size_t>(n);
    if (n == 0) throw std::runtime_error("the other side closed the socket");
    if (errno != EINTR) throw std::runtime_error(std::string("recv: ") + std::strerror(errno));
  }
}

WsPipe::WsPipe(const std::string& server, const std::string& path, const std::string& token) {
  // http://127.0.0.1:PORT is all bench/run gives us.
  const auto scheme = server.find("://");
  const auto hostport = server.substr(scheme == std::string::npos ? 0 : scheme + 3);
  const auto colon = hostport.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("server URL without a port: " + server);
  const auto host = hostport.substr(0, colon);
  const auto port = static_cast<unsigned short>(std::stoul(hostport.substr(colon + 1)));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  if (::inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1)
    throw std::runtime_error("not an IPv4 address: " + host);
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw std::runtime_error("socket failed");
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd_);
    throw std::runtime_error("cannot connect to " + server);
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  send_all(fd_, "GET " + path + " HTTP/1.1\r\nHost: " + hostport +
                    "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    "Sec-WebSocket-Key: YmVuY2gtd2Vic29ja2V0IQ==\r\nSec-WebSocket-Version: 13\r\n"
                    "Authorization: Bearer " +
                    token + "\r\n\r\n");
  std::size_t end;
  while ((end = in_.find("\r\n\r\n")) == std::string::npos) fill(std::chrono::seconds(10));
  if (in_.compare(0, 12, "HTTP/1.1 101") != 0)
    throw std::runtime_error("WebSocket refused: " + in_.substr(0, in_.find("\r\n")) + " " +
                             in_.substr(end + 4));
  in_at_ = end + 4;
}

WsPipe::~WsPipe() {
  if (fd_ >= 0) ::close(fd_);
}

void WsPipe::fill(std::chrono::milliseconds timeout) {
  if (in_at_ > 0) {
    in_.erase(0, in_at_);
    in_at_ = 0;
  }
  if (wait_readable(fd_, timeout) == 0)
    throw std::runtime_error("WebSocket: nothing within the timeout");
  char chunk[64 * 1024];
  for (;;) {
    const auto n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n > 0) {
      in_.append(chunk, static_cast<std::size_t>(n));
      return;
    }
    if (n == 0) throw std::runtime_error("the server closed the WebSocket");
    if (errno != EINTR) throw std::runtime_error(std::string("recv: ") + std::strerror(errno));
  }
}

void WsPipe::write_all(std::string_view bytes) {
  out_.clear();
  out_ += static_cast<char>(0x82);  // FIN, binary
  const auto n = bytes.size();
  if (n < 126) {
    out_ += static_cast<char>(0x80 | n);
  } else if (n < 65536) {
    out_ += static_cast<char>(0x80 | 126);
    out_ += static_cast<char>(n >> 8);
    out_ += static_cast<char>(n & 0xff);
  } else {
    out_ += static_cast<char>(0x80 | 127);
    for (int i = 7; i >= 0; --i) out_ += static_cast<char>((n >> (8 * i)) & 0xff);
  }
  const char mask[4] = {0x5a, 0x1b, 0x3c, 0x7d};
  out_.append(mask, 4);
  for (std::size_t i = 0; i < n; ++i) out_ += static_cast<char>(bytes[i] ^ mask[i % 4]);
  send_all(fd_, out_);
}

std::size_t WsPipe::read_some(char* out, std::size_t max, std::chrono::milliseconds timeout) {
  for (;;) {
    if (frame_left_ > 0) {
      const auto buffered = in_.size() - in_at_;
      if (buffered > 0) {
        const auto n = std::min({max, frame_left_, buffered});
        std::memcpy(out, in_.data() + in_at_, n);
        in_at_ += n;
        frame_left_ -= n;
        return n;
      }
      // A large payload goes straight into the caller's buffer, as FdPipe's bytes do.
      if (wait_readable(fd_, timeout) == 0) return 0;
      const auto n = ::recv(fd_, out, std::min(max, frame_left_), 0);
      if (n == 0) throw std::runtime_error("the server closed the WebSocket");
      if (n < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(std::string("recv: ") + std::strerror(errno));
      }
      frame_left_ -= static_cast<std::size_t>(n);
      return static_cast<std::size_t>(n);
    }
    // A frame header: 2 bytes, then 0, 2 or 8 of length, then 4 of mask if masked.
    while (in_.size() - in_at_ < 2) fill(timeout);
    const auto* h = reinterpret_cast<const unsigned char*>(in_.data() + in_at_);
    const int opcode = h[0] & 0x0f;
    const bool masked = (h[1] & 0x80) != 0;
    std::size_t length = h[1] & 0x7f;
    const std::size_t extra = length == 126 ? 2 : length == 127 ? 8 : 0;
    const std::size_t header = 2 + extra + (masked ? 4 : 0);
    while (in_.size() - in_at_ < header) fill(timeout);
    h = reinterpret_cast<const unsigned char*>(in_.data() + in_at_);
    if (extra > 0) {
      length = 0;
      for (std::size_t i = 0; i < extra; ++i) length = (length << 8) | h[2 + i];
    }
    if (masked) throw std::runtime_error("WebSocket: the server masked a frame");
    if (opcode == 0 || opcode == 1 || opcode == 2) {
      in_at_ += header;
      frame_left_ = length;
      continue;
    }
    // A control frame: its payload whole, then answer a ping, stop at a close.
    while (in_.size() - in_at_ < header + length) fill(timeout);
    const auto payload = in_.substr(in_at_ + header, length);
    in_at_ += header + length;
    if (opcode == 8) throw std::runtime_error("the server closed the WebSocket");
    if (opcode == 9) {
      std::string pong;
      pong += static_cast<char>(0x8a);
      pong += static_cast<char>(0x80 | payload.size());
      pong.append(4, '\0');  // a zero mask leaves the payload as it is
      pong += payload;
      send_all(fd_, pong);
    }
  }
}

}  // namespace bowline::bench
