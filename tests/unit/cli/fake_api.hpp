// A scripted HTTP server on 127.0.0.1 for the CLI's client tests: canned answers by method and
// path, a record of every request, and event streams written frame by frame.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace bowline::clitest {

struct Request {
  std::string method, target, body;
  std::map<std::string, std::string> headers;  // names lowercased
};

struct Reply {
  Reply() = default;
  Reply(int status_code, std::string text, std::string type = "application/json")
      : status(status_code), body(std::move(text)), content_type(std::move(type)) {}
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  // An event stream: each frame is written after its delay; the connection stays open until
  // the server stops (or closes after the last frame when `close_after`).
  std::vector<std::pair<std::chrono::milliseconds, std::string>> frames;
  bool close_after = false;
};

class FakeApi {
 public:
  using Handler = std::function<Reply(const Request&)>;

  FakeApi() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd_, 64);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~FakeApi() {
    stopping_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    acceptor_.join();
    std::lock_guard lock(mutex_);
    for (auto& t : workers_) t.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // "GET /api/v1/spaces" (the target with its query, if any).
  void on(const std::string& method_and_target, Handler handler) {
    std::lock_guard lock(mutex_);
    handlers_[method_and_target] = std::move(handler);
  }
  void on(const std::string& method_and_target, Reply reply) {
    on(method_and_target, [reply](const Request&) { return reply; });
  }

  std::vector<Request> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const auto& r : requests()) out.push_back(r.method + " " + r.target);
    return out;
  }

 private:
  void accept_loop() {
    while (!stopping_) {
      const int client = ::accept(fd_, nullptr, nullptr);
      if (client < 0) continue;
      std::lock_guard lock(mutex_);
      workers_.emplace_back([this, client] { serve(client); });
    }
  }

  static bool send_all(int fd, const std::string& data) {
    std::size_t done = 0;
    while (done < data.size()) {
      const auto n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  }

  void serve(int client) {
    std::string in;
    char buffer[4096];
    std::size_t header_end = std::string::npos;
    while ((header_end = in.find("\r\n\r\n")) == std::string::npos) {
      const auto n = ::recv(client, buffer, sizeof buffer, 0);
      if (n <= 0) {
        ::close(client);
        return;
      }
      in.append(buffer, static_cast<std::size_t>(n));
    }
    Request request;
    const auto first_end = in.find("\r\n");
    const auto first = in.substr(0, first_end);
    const auto sp1 = first.find(' '), sp2 = first.rfind(' ');
    request.method = first.substr(0, sp1);
    request.target = first.substr(sp1 + 1, sp2 - sp1 - 1);
    std::size_t at = first_end + 2;
    while (at < header_end) {
      const auto end = in.find("\r\n", at);
      const auto line = in.substr(at, end - at);
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        auto value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        request.headers[name] = value;
      }
      at = end + 2;
    }
    std::size_t length = 0;
    if (auto it = request.headers.find("content-length"); it != request.headers.end())
      length = std::stoul(it->second);
    request.body = in.substr(header_end + 4);
    while (request.body.size() < length) {
      const auto n = ::recv(client, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      request.body.append(buffer, static_cast<std::size_t>(n));
    }
    Handler handler;
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(request);
      if (auto it = handlers_.find(request.method + " " + request.target); it != handlers_.end())
        handler = it->second;
    }
    Reply reply = handler
                      ? handler(request)
                      : Reply{404, R"({"error":"no such route in the fake"})", "application/json"};
    std::string head = "HTTP/1.1 " + std::to_string(reply.status) +
                       " X\r\nContent-Type: " + reply.content_type + "\r\n";
    if (reply.frames.empty()) {
      head +=
          "Content-Length: " + std::to_string(reply.body.size()) + "\r\nConnection: close\r\n\r\n";
      send_all(client, head + reply.body);
    } else {
      head += "Cache-Control: no-cache\r\nConnection: close\r\n\r\n";
      bool ok = send_all(client, head);
      for (const auto& [delay, frame] : reply.frames) {
        if (!ok || stopping_) break;
        std::this_thread::sleep_for(delay);
        ok = send_all(client, frame);
      }
      while (ok && !reply.close_after && !stopping_) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        char probe;
        const auto n = ::recv(client, &probe, 1, MSG_DONTWAIT);
        if (n == 0) break;  // the client went away
      }
    }
    ::close(client);
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  mutable std::mutex mutex_;
  std::map<std::string, Handler> handlers_;
  std::vector<Request> requests_;
  std::vector<std::thread> workers_;
};

// An SSE frame as bowline's server writes it.
inline std::string sse(long seq, const std::string& kind, const std::string& space_id,
                       const std::string& payload_json) {
  return "id: " + std::to_string(seq) + "\nevent: " + kind +
         "\ndata: {\"seq\":" + std::to_string(seq) + ",\"time\":0,\"kind\":\"" + kind +
         "\",\"spaceId\":\"" + space_id + "\",\"payload\":" + payload_json + "}\n\n";
}

}  // namespace bowline::clitest
