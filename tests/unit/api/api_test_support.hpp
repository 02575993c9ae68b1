// Shared by the API tests: the real stack (SQLite store in a temp directory, the engine on
// libvirt's test:///default driver, the HTTP server on 127.0.0.1 port 0) and a small HTTP
// client over a raw socket, with a reader for server-sent events.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "../store/store_test_support.hpp"
#include "api/api.hpp"
#include "api/auth.hpp"
#include "api/http_server.hpp"
#include "engine/engine.hpp"
#include "engine/event_bus.hpp"
#include "engine/host_probe.hpp"
#include "engine/libvirt_node.hpp"
#include "image/cache.hpp"
#include "image/overlay.hpp"
#include "libvirt/libvirt_hypervisor.hpp"
#include "server/first_admin.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"
#include "util/process.hpp"

namespace bowline::api::testing {

using nlohmann::json;
using namespace std::chrono_literals;

using store::testing::TempDir;  // a temporary directory, removed with everything in it

// Says every bridge exists and has a NIC.
class FakeHostProbe final : public engine::HostProbe {
 public:
  bool bridge_exists(const std::string&) const override { return true; }
  std::vector<std::string> bridge_ports(const std::string&) const override { return {"eth0"}; }
};

// ---- a raw HTTP/1.1 client ------------------------------------------------------------------

struct HttpResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  json parsed() const { return body.empty() ? json() : json::parse(body); }
  std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

inline int connect_to(unsigned short port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    throw std::runtime_error("connect failed");
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

inline void send_all(int fd, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const auto n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) throw std::runtime_error("send failed");
    sent += static_cast<std::size_t>(n);
  }
}

// Reads what is there within `timeout`; "" at end of stream or timeout (`eof` says which).
inline std::string receive_some(int fd, std::chrono::milliseconds timeout, bool* eof = nullptr) {
  pollfd p{fd, POLLIN, 0};
  if (eof) *eof = false;
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return {};
  char buffer[65536];
  const auto n = ::read(fd, buffer, sizeof buffer);
  if (n <= 0) {
    if (eof) *eof = true;
    return {};
  }
  return std::string(buffer, static_cast<std::size_t>(n));
}

class HttpClient {
 public:
  explicit HttpClient(unsigned short port) : port_(port) {}
  ~HttpClient() { disconnect(); }
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  HttpResponse request(const std::string& method, const std::string& target,
                       const std::string& token = {}, const std::string& body = {},
                       const std::vector<std::string>& extra_headers = {}) {
    if (fd_ < 0) fd_ = connect_to(port_);
    std::string text = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    if (!token.empty()) text += "Authorization: Bearer " + token + "\r\n";
    for (const auto& h : extra_headers) text += h + "\r\n";
    if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH")
      text += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
              "\r\n";
    text += "\r\n" + body;
    send_all(fd_, text);
    return read_response();
  }
  HttpResponse get(const std::string& target, const std::string& token) {
    return request("GET", target, token);
  }
  HttpResponse post(const std::string& target, const std::string& token, const json& body) {
    return request("POST", target, token, body.dump());
  }
  HttpResponse send_raw(const std::string& text) {
    if (fd_ < 0) fd_ = connect_to(port_);
    send_all(fd_, text);
    return read_response();
  }
  void disconnect() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    pending_.clear();
  }
  bool connected() const { return fd_ >= 0; }

 private:
  HttpResponse read_response() {
    HttpResponse r;
    std::size_t end;
    while ((end = pending_.find("\r\n\r\n")) == std::string::npos) fill();
    const auto head = pending_.substr(0, end);
    pending_.erase(0, end + 4);
    std::size_t line_end = head.find("\r\n");
    const auto status_line = head.substr(0, line_end);
    r.status = std::stoi(status_line.substr(9, 3));
    while (line_end != std::string::npos) {
      const auto start = line_end + 2;
      line_end = head.find("\r\n", start);
      const auto line =
          head.substr(start, line_end == std::string::npos ? std::string::npos : line_end - start);
      const auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      auto name = line.substr(0, colon);
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      auto value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      r.headers[name] = value;
    }
    if (r.status == 100) return read_response();
    std::size_t length = 0;
    if (auto it = r.headers.find("content-length"); it != r.headers.end())
      length = std::stoul(it->second);
    while (pending_.size() < length) fill();
    r.body = pending_.substr(0, length);
    pending_.erase(0, length);
    if (auto it = r.headers.find("connection"); it != r.headers.end() && it->second == "close")
      disconnect();
    return r;
  }
  void fill() {
    bool eof = false;
    auto more = receive_some(fd_, 30s, &eof);
    if (more.empty()) throw std::runtime_error(eof ? "connection closed" : "read timed out");
    pending_ += more;
  }

  unsigned short port_;
  int fd_ = -1;
  std::string pending_;
};

// ---- server-sent events ---------------------------------------------------------------------

struct SseEvent {
  std::int64_t id = 0;
  std::string kind;
  json data;
};

class SseStream {
 public:
  SseStream(unsigned short port, const std::string& token, const std::string& target) {
    fd_ = connect_to(port);
    send_all(fd_, "GET " + target +
                      " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n" +
                      (token.empty() ? std::string() : "Authorization: Bearer " + token + "\r\n") +
                      "\r\n");
    std::size_t end;
    while ((end = buffer_.find("\r\n\r\n")) == std::string::npos) {
      auto more = receive_some(fd_, 10s);
      if (more.empty()) throw std::runtime_error("no answer to the event stream request");
      buffer_ += more;
    }
    head_ = buffer_.substr(0, end);
    buffer_.erase(0, end + 4);
    status_ = std::stoi(head_.substr(9, 3));
  }
  ~SseStream() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int status() const { return status_; }
  const std::string& head() const { return head_; }
  const std::vector<std::string>& comments() const { return comments_; }

  // The next event within `timeout`; nullopt when none came.
  std::optional<SseEvent> next(std::chrono::milliseconds timeout = 10s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      if (auto e = parse_one()) return e;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left <= 0ms) return std::nullopt;
      auto more = receive_some(fd_, left);
      if (more.empty()) continue;
      buffer_ += more;
    }
  }
  // Events until one of `kind` for `space` arrives (included), within `timeout`.
  std::vector<SseEvent> until(const std::string& kind, const std::string& space,
                              std::chrono::milliseconds timeout = 20s) {
    std::vector<SseEvent> out;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      auto e = next(std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now()));
      if (!e) break;
      out.push_back(*e);
      if (e->kind == kind && e->data.value("spaceId", json()) == space) break;
    }
    return out;
  }
  // Reads for `duration`, collecting comments (heartbeats) and events.
  std::vector<SseEvent> drain(std::chrono::milliseconds duration) {
    std::vector<SseEvent> out;
    const auto deadline = std::chrono::steady_clock::now() + duration;
    while (std::chrono::steady_clock::now() < deadline)
      if (auto e = next(std::chrono::duration_cast<std::chrono::milliseconds>(
              deadline - std::chrono::steady_clock::now())))
        out.push_back(*e);
    return out;
  }

 private:
  std::optional<SseEvent> parse_one() {
    for (;;) {
      const auto end = buffer_.find("\n\n");
      if (end == std::string::npos) return std::nullopt;
      const auto block = buffer_.substr(0, end);
      buffer_.erase(0, end + 2);
      SseEvent e;
      bool any = false;
      std::size_t start = 0;
      while (start <= block.size()) {
        auto nl = block.find('\n', start);
        const auto line =
            block.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        start = nl == std::string::npos ? block.size() + 1 : nl + 1;
        if (line.rfind(":", 0) == 0) {
          comments_.push_back(line);
        } else if (line.rfind("id: ", 0) == 0) {
          e.id = std::stoll(line.substr(4));
          any = true;
        } else if (line.rfind("event: ", 0) == 0) {
          e.kind = line.substr(7);
        } else if (line.rfind("data: ", 0) == 0) {
          e.data = json::parse(line.substr(6));
        }
      }
      if (any) return e;
    }
  }

  int fd_ = -1;
  int status_ = 0;
  std::string head_;
  std::string buffer_;
  std::vector<std::string> comments_;
};

// ---- the stack ------------------------------------------------------------------------------

inline std::string bridged_template(const std::string& bridge = "br-test",
                                    const std::string& first = "198.51.100.10",
                                    const std::string& last = "198.51.100.100") {
  return "name: ${{ .user.username }}-${{ .space.name }}\n"
         "hostname: ${{ .space.name }}\n"
         "image: base\n"
         "memory: 256M\n"
         "cpus: 1\n"
         "network:\n"
         "  mode: bridged\n"
         "  cidr: 198.51.100.0/24\n"
         "  bridge: " +
         bridge +
         "\n"
         "  ip_range_start: " +
         first +
         "\n"
         "  ip_range_end: " +
         last +
         "\n"
         "  gateway: 198.51.100.1\n";
}

// Every piece of the server, as `bowline server` wires it, but on the test driver and with
// the HTTP server on a free port.
class ApiStack {
 public:
  // What the node talks to instead of the test driver itself: a wrapper around it.
  using HypervisorWrap =
      std::function<std::unique_ptr<libvirt::Hypervisor>(libvirt::Hypervisor& test_driver)>;

  // `engine`: the engine's settings (e.g. default quotas); the stack sets no others.
  explicit ApiStack(HttpServerOptions http = test_http_options(),
                    engine::EngineSettings engine = {}, HypervisorWrap wrap = {}) {
    images_ = dir_.path() / "images";
    std::filesystem::create_directories(images_ / "cloud-images");
    std::filesystem::create_directories(images_ / "base");
    util::SystemProcessRunner runner;
    const auto made = runner.run({"qemu-img", "create", "-q", "-f", "qcow2",
                                  (images_ / "cloud-images" / "base.qcow2").string(), "16M"},
                                 std::chrono::seconds(30));
    if (made.exit_code != 0) throw std::runtime_error("qemu-img create failed: " + made.err);

    store_ = std::make_unique<store::Store>(dir_.path() / "bowline.db", clock_);
    admin_token_ = *server::bootstrap_admin(*store_, dir_.path() / "admin.token");
    libvirt::LibvirtOptions lo;
    lo.uri = "test:///default";
    hypervisor_ = std::make_unique<libvirt::LibvirtHypervisor>(lo);
    if (wrap) wrapped_ = wrap(*hypervisor_);
    image::CacheOptions co;
    co.cloud_image_path = images_ / "cloud-images";
    co.base_image_path = images_ / "base";
    images_cache_ = std::make_unique<image::ImageCache>(co);
    disks_ = std::make_unique<image::Disks>(runner_);
    events_ = std::make_unique<engine::EventBus>(*store_);
    engine::LibvirtNodeSettings local;
    local.node.domain_type = plan::DomainType::Qemu;
    local.node.images_path = images_.string();
    local.stop_timeout = std::chrono::seconds(2);
    local.host_addresses = [] { return std::set<std::uint32_t>{}; };
    node_ = std::make_unique<engine::LibvirtNode>(wrapped_ ? *wrapped_ : *hypervisor_,
                                                  *images_cache_, *disks_, probe_, local);
    // The host's own addresses are a seam: bridges that e2e tests running beside this one
    // make in 198.51.100.0/24 must not take addresses out of a test's range.
    if (!engine.host_addresses) engine.host_addresses = [] { return std::set<std::uint32_t>{}; };
    engine_ = std::make_unique<engine::Engine>(*store_, *events_, std::move(engine));
    engine_->add_node(*node_);
    disk_files_ = std::make_unique<engine::DiskFiles>(images_, *images_cache_, *disks_);
    engine_->set_disk_files(*disk_files_);
    engine_->start();
    api_ = std::make_unique<Api>(*store_, *engine_, *events_, ApiOptions{});
    server_ = std::make_unique<HttpServer>(std::move(http),
                                           [this](Request& r) { return api_->handle(r); });
    server_->start();
  }
  ~ApiStack() {
    server_->stop();
    engine_->wait_idle();
  }

  static HttpServerOptions test_http_options() {
    HttpServerOptions o;
    o.port = 0;
    o.heartbeat = 300ms;
    return o;
  }

  unsigned short port() const { return server_->port(); }
  const std::string& admin_token() const { return admin_token_; }
  store::Store& store() { return *store_; }
  engine::Engine& engine() { return *engine_; }
  engine::EventBus& events() { return *events_; }
  Api& api() { return *api_; }
  HttpServer& server() { return *server_; }
  const std::filesystem::path& dir() const { return dir_.path(); }
  const std::filesystem::path& images() const { return images_; }

  // A user straight in the store, with a token.
  std::string make_user(const std::string& username, bool admin = false) {
    store::NewUser u;
    u.username = username;
    if (admin) u.permissions = {store::Permission::Admin};
    const auto user = store_->users().create(u);
    return issue_token(*store_, user.id, "test");
  }

  // Polls GET /operations/{id} until it has finished; its final JSON.
  json wait_operation(std::int64_t id, const std::string& token,
                      std::chrono::milliseconds timeout = 30s) {
    HttpClient client(port());
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      auto r = client.get("/api/v1/operations/" + std::to_string(id), token);
      if (r.status != 200) throw std::runtime_error("GET operation: " + r.body);
      auto op = r.parsed();
      if (!op["finishedAt"].is_null()) return op;
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("operation did not finish: " + r.body);
      std::this_thread::sleep_for(20ms);
    }
  }

 private:
  TempDir dir_;
  std::filesystem::path images_;
  util::SystemClock clock_;
  util::SystemProcessRunner runner_;
  FakeHostProbe probe_;
  std::unique_ptr<store::Store> store_;
  std::string admin_token_;
  std::unique_ptr<libvirt::LibvirtHypervisor> hypervisor_;
  std::unique_ptr<libvirt::Hypervisor> wrapped_;
  std::unique_ptr<image::ImageCache> images_cache_;
  std::unique_ptr<image::Disks> disks_;
  std::unique_ptr<engine::EventBus> events_;
  std::unique_ptr<engine::LibvirtNode> node_;
  std::unique_ptr<engine::DiskFiles> disk_files_;
  std::unique_ptr<engine::Engine> engine_;
  std::unique_ptr<Api> api_;
  std::unique_ptr<HttpServer> server_;
};

// Usernames and space names unique within this process: test:///default keeps its domains
// for the life of the process, shared by every test in it.
inline std::string unique(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + std::to_string(::getpid() % 1000) + "x" + std::to_string(counter++);
}

}  // namespace bowline::api::testing
