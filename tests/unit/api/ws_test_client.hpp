// A minimal WebSocket client over a raw socket for the API tests: the handshake (with the
// headers a test chooses), masked binary frames out, frames in.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "api_test_support.hpp"

namespace bowline::api::testing {

class WsClient {
 public:
  // Sends the handshake for `target`; status() is 101 when the server switched protocols.
  WsClient(unsigned short port, const std::string& target,
           const std::vector<std::string>& headers) {
    fd_ = connect_to(port);
    std::string text =
        "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
        "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";
    for (const auto& h : headers) text += h + "\r\n";
    send_all(fd_, text + "\r\n");
    std::size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      bool eof = false;
      auto more = receive_some(fd_, 10s, &eof);
      if (more.empty()) throw std::runtime_error("no answer to the WebSocket handshake");
      buffer_ += more;
    }
    head_ = buffer_.substr(0, end);
    buffer_.erase(0, end + 4);
    status_ = std::stoi(head_.substr(9, 3));
    if (status_ != 101) {
      // The body of a refusal, for messages.
      const auto at = head_.find("Content-Length: ");
      const auto length = at == std::string::npos ? 0 : std::stoul(head_.substr(at + 16));
      while (buffer_.size() < length) {
        auto more = receive_some(fd_, 10s);
        if (more.empty()) break;
        buffer_ += more;
      }
      body_ = buffer_;
    }
  }
  ~WsClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  WsClient(const WsClient&) = delete;
  WsClient& operator=(const WsClient&) = delete;

  int status() const { return status_; }
  const std::string& head() const { return head_; }
  const std::string& body() const { return body_; }

  void send(const std::string& payload, int opcode = 2) {
    std::string frame;
    frame += static_cast<char>(0x80 | opcode);
    const auto n = payload.size();
    if (n < 126) {
      frame += static_cast<char>(0x80 | n);
    } else if (n < 65536) {
      frame += static_cast<char>(0x80 | 126);
      frame += static_cast<char>(n >> 8);
      frame += static_cast<char>(n & 0xff);
    } else {
      frame += static_cast<char>(0x80 | 127);
      for (int i = 7; i >= 0; --i) frame += static_cast<char>((n >> (8 * i)) & 0xff);
    }
    const unsigned char mask[4] = {0x12, 0x34, 0x56, 0x78};
    frame.append(reinterpret_cast<const char*>(mask), 4);
    for (std::size_t i = 0; i < n; ++i)
      frame += static_cast<char>(payload[i] ^ static_cast<char>(mask[i % 4]));
    send_all(fd_, frame);
  }

  // The payload of the next data frame within `timeout`; nullopt on timeout or close.
  std::optional<std::string> receive(std::chrono::milliseconds timeout = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (auto frame = parse()) {
        if (opcode_ == 8) {
          closed_ = true;
          return std::nullopt;
        }
        if (opcode_ == 9 || opcode_ == 10) continue;  // ping/pong
        return frame;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left <= 0ms || closed_) return std::nullopt;
      bool eof = false;
      auto more = receive_some(fd_, left, &eof);
      if (eof) {
        closed_ = true;
        return std::nullopt;
      }
      buffer_ += more;
    }
  }
  // Everything received until `needle` shows up (or `timeout`).
  std::string receive_until(const std::string& needle, std::chrono::milliseconds timeout = 20s) {
    std::string all;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (all.find(needle) == std::string::npos) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left <= 0ms) break;
      auto frame = receive(left);
      if (!frame) break;
      all += *frame;
    }
    return all;
  }
  bool closed() const { return closed_; }

 private:
  std::optional<std::string> parse() {
    if (buffer_.size() < 2) return std::nullopt;
    const auto b0 = static_cast<unsigned char>(buffer_[0]);
    const auto b1 = static_cast<unsigned char>(buffer_[1]);
    std::size_t length = b1 & 0x7f, at = 2;
    if (length == 126) {
      if (buffer_.size() < 4) return std::nullopt;
      length =
          (static_cast<unsigned char>(buffer_[2]) << 8) | static_cast<unsigned char>(buffer_[3]);
      at = 4;
    } else if (length == 127) {
      if (buffer_.size() < 10) return std::nullopt;
      length = 0;
      for (int i = 0; i < 8; ++i)
        length = (length << 8) | static_cast<unsigned char>(buffer_[2 + i]);
      at = 10;
    }
    if (buffer_.size() < at + length) return std::nullopt;
    opcode_ = b0 & 0x0f;
    auto payload = buffer_.substr(at, length);
    buffer_.erase(0, at + length);
    return payload;
  }

  int fd_ = -1;
  int status_ = 0;
  int opcode_ = 0;
  bool closed_ = false;
  std::string head_, body_, buffer_;
};

}  // namespace bowline::api::testing
