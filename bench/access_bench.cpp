// bowline-bench-access: what bowline's WebSocket bridges cost, one JSON line out.
//
//   vnc URI SERVER TOKEN SPACE_ID DOMAIN ROUNDS SECONDS
//       RFB throughput from the running domain's QEMU VNC server, Raw encoding, full-screen
//       non-incremental requests, read three ways in interleaved rounds of SECONDS each:
//         tcp      QEMU's own listener on 127.0.0.1 (the domain's port, VNC authentication
//                  with the space's password from the domain's secure XML)
//         direct   a socket of our own from virDomainOpenGraphicsFD (SKIPAUTH): the very kind
//                  of connection the bridge itself reads from
//         bridge   ws://SERVER/api/v1/spaces/SPACE_ID/vnc of a real `bowline server`
//   vnc-capacity ROUNDS SECONDS
//       the bridge's own ceiling: the same client and rounds against an RFB server in this
//       process that answers every request at once with a 1920x1080 Raw frame (no refresh
//       timer, no guest), straight from its socketpair and through HttpServer + SocketBridge
//       (the VNC route's wiring)
//   console ROUNDS [handover]
//       one-byte round trips through the console path: bowline's HttpServer and ConsoleHub
//       (the console route's own open/message/close wiring) in this process, in front of an
//       echo console behind the Hypervisor seam, against the same echo console without them.
//       `handover`: the echo console takes nothing at once (write_now), so every keystroke goes
//       through the hub's writer thread, as before ConsoleHub wrote from the caller's thread.
#include <arpa/inet.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "api/console_hub.hpp"
#include "api/http_server.hpp"
#include "api/socket_bridge.hpp"
#include "byte_pipe.hpp"
#include "echo_measures.hpp"
#include "libvirt/hypervisor.hpp"
#include "rfb_client.hpp"
#include "util/tcp_connect.hpp"

namespace bowline::bench {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// ---- VNC ------------------------------------------------------------------------------------

std::string libvirt_message() {
  const auto* e = virGetLastError();
  return e && e->message ? e->message : "unknown libvirt error";
}

int open_display(virConnectPtr connection, const std::string& domain) {
  virDomainPtr dom = virDomainLookupByName(connection, domain.c_str());
  if (!dom) throw std::runtime_error("domain " + domain + ": " + libvirt_message());
  const int fd = virDomainOpenGraphicsFD(dom, 0, VIR_DOMAIN_OPEN_GRAPHICS_SKIPAUTH);
  virDomainFree(dom);
  if (fd < 0) throw std::runtime_error("open the display of " + domain + ": " + libvirt_message());
  return fd;
}

// QEMU's TCP listener for the domain's display: its port and password.
struct TcpDisplay {
  unsigned short port = 0;
  std::string password;
};

std::string attribute(const std::string& tag, const std::string& name) {
  const auto at = tag.find(" " + name + "='");
  if (at == std::string::npos) return {};
  const auto start = at + name.size() + 3;
  return tag.substr(start, tag.find('\'', start) - start);
}

TcpDisplay tcp_display(virConnectPtr connection, const std::string& domain) {
  virDomainPtr dom = virDomainLookupByName(connection, domain.c_str());
  if (!dom) throw std::runtime_error("domain " + domain + ": " + libvirt_message());
  char* xml = virDomainGetXMLDesc(dom, VIR_DOMAIN_XML_SECURE);
  virDomainFree(dom);
  if (!xml) throw std::runtime_error("domain " + domain + ": " + libvirt_message());
  const std::string text(xml);
  free(xml);
  const auto at = text.find("<graphics type='vnc'");
  if (at == std::string::npos) throw std::runtime_error("domain " + domain + " has no VNC display");
  const auto tag = text.substr(at, text.find('>', at) - at);
  TcpDisplay out;
  const auto port = attribute(tag, "port");
  if (port.empty() || port == "-1") throw std::runtime_error("the display has no TCP port");
  out.port = static_cast<unsigned short>(std::stoul(port));
  out.password = attribute(tag, "passwd");
  return out;
}

int connect_tcp(unsigned short port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port));
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

int vnc(const std::string& uri, const std::string& server, const std::string& token,
        const std::string& space, const std::string& domain, int rounds, double seconds) {
  virConnectPtr connection = virConnectOpen(uri.c_str());
  if (!connection) throw std::runtime_error("cannot connect to " + uri + ": " + libvirt_message());
  const auto duration = std::chrono::milliseconds(static_cast<long>(seconds * 1000));
  // Two requests in flight: the next one is already at QEMU while an update travels, so the
  // figure is the path's bandwidth rather than its round-trip time.
  constexpr int kInFlight = 2;
  const auto tcp = tcp_display(connection, domain);
  nlohmann::json out;
  std::map<std::string, std::vector<double>> rates;
  const auto one = [&](const std::string& way) {
    std::unique_ptr<BytePipe> pipe;
    if (way == "bridge")
      pipe = std::make_unique<WsPipe>(server, "/api/v1/spaces/" + space + "/vnc", token);
    else if (way == "tcp")
      pipe = std::make_unique<FdPipe>(connect_tcp(tcp.port));
    else
      pipe = std::make_unique<FdPipe>(open_display(connection, domain));
    RfbClient client(*pipe, way == "tcp" ? tcp.password : std::string());
    const auto r = client.measure(duration, kInFlight);
    rates[way].push_back(static_cast<double>(r.bytes) / r.seconds);
    out["screen"] = std::to_string(r.width) + "x" + std::to_string(r.height);
    out["frame_bytes"] = r.updates ? r.bytes / r.updates : 0;
    out[way + "_updates"].push_back(r.updates);
  };
  const std::vector<std::string> ways = {"tcp", "direct", "bridge"};
  for (int round = 0; round < rounds; ++round) {
    // Rotate which goes first, so none always meets the host's quieter moment.
    for (std::size_t i = 0; i < ways.size(); ++i) one(ways[(i + round) % ways.size()]);
  }
  virConnectClose(connection);
  for (const auto& way : ways) {
    out[way + "_Bps"] = rates[way];
    out[way + "_median_Bps"] = median(rates[way]);
  }
  // The comparison is with a direct TCP connection; the fd one isolates the bridge.
  out["ratio"] = median(rates["tcp"]) > 0 ? median(rates["bridge"]) / median(rates["tcp"]) : 0;
  out["ratio_fd"] =
      median(rates["direct"]) > 0 ? median(rates["bridge"]) / median(rates["direct"]) : 0;
  out["seconds"] = seconds;
  out["in_flight"] = kInFlight;
  std::cout << out.dump() << "\n";
  return 0;
}

// ---- console --------------------------------------------------------------------------------

// A console whose guest echoes at once: one end of a socketpair, a thread on the other end
// sending back whatever arrives (what a pty in QEMU is to libvirt, minus the guest).
class EchoConsole final : public util::ByteStream {
 public:
  explicit EchoConsole(bool write_now) : write_now_(write_now) {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
      throw libvirt::HypervisorError("socketpair failed");
    fd_ = fds[0];
    echo_ = std::thread([fd = fds[1]] {
      char buffer[4096];
      for (;;) {
        const auto n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        if (::send(fd, buffer, static_cast<std::size_t>(n), MSG_NOSIGNAL) != n) break;
      }
      ::close(fd);
    });
  }
  ~EchoConsole() override {
    close();
    echo_.join();
    ::close(fd_);
  }

  std::string read(std::chrono::milliseconds timeout, std::size_t max) override {
    pollfd p{fd_, POLLIN, 0};
    if (closed_ || ::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return {};
    std::string out(max, '\0');
    const auto n = ::recv(fd_, out.data(), max, MSG_DONTWAIT);
    if (n <= 0) {
      if (n == 0) eof_ = true;
      return {};
    }
    out.resize(static_cast<std::size_t>(n));
    return out;
  }
  void write(std::string_view data) override {
    if (closed_) throw libvirt::HypervisorError("the echo console is closed");
    while (!data.empty()) {
      const auto n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0) throw libvirt::HypervisorError("the echo console failed");
      data.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  std::size_t write_now(std::string_view data) override {
    if (closed_ || !write_now_) return 0;
    const auto n = ::send(fd_, data.data(), data.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    return n > 0 ? static_cast<std::size_t>(n) : 0;
  }
  bool eof() const override { return eof_ || closed_; }
  void close() override {
    if (!closed_.exchange(true)) ::shutdown(fd_, SHUT_RDWR);
  }

 private:
  const bool write_now_;
  int fd_ = -1;
  std::thread echo_;
  std::atomic<bool> closed_{false}, eof_{false};
};

// The Hypervisor seam with nothing in it; the benches add a console or a display.
class BareHost : public libvirt::Hypervisor {
 public:
  std::string uri() const override { return "bench"; }
  libvirt::DomainInfo define(const std::string&) override { throw no(); }
  void start(const std::string&, libvirt::StartOptions) override { throw no(); }
  void resume(const std::string&) override { throw no(); }
  void shutdown(const std::string&) override { throw no(); }
  bool destroy(const std::string&) override { throw no(); }
  bool undefine(const std::string&) override { throw no(); }
  std::optional<libvirt::DomainInfo> lookup(const std::string&) override { throw no(); }
  std::vector<libvirt::DomainInfo> list() override { throw no(); }
  libvirt::DomainStatus state(const std::string&) override { throw no(); }
  void set_autostart(const std::string&, bool) override { throw no(); }
  std::string domain_xml(const std::string&, bool) override { throw no(); }
  std::vector<libvirt::InterfaceAddress> interface_addresses(const std::string&,
                                                             libvirt::AddressSource) override {
    throw no();
  }
  std::string agent_command(const std::string&, const std::string&, std::chrono::seconds) override {
    throw no();
  }
  libvirt::Subscription subscribe(libvirt::LifecycleCallback) override { throw no(); }
  std::optional<libvirt::NetworkInfo> lookup_network(const std::string&) override { throw no(); }
  std::vector<libvirt::NetworkInfo> list_networks() override { throw no(); }
  std::vector<libvirt::NodeDevice> node_devices() override { throw no(); }
  libvirt::DomainCapabilities domain_capabilities(const std::string&) override { throw no(); }
  std::unique_ptr<util::ByteStream> open_console(const std::string&, const std::string&,
                                                 bool) override {
    throw no();
  }

 protected:
  static libvirt::HypervisorError no() { return libvirt::HypervisorError("not in this bench"); }
};

// Echo consoles only.
class EchoHost final : public BareHost {
 public:
  explicit EchoHost(bool write_now) : write_now_(write_now) {}
  std::unique_ptr<util::ByteStream> open_console(const std::string&, const std::string&,
                                                 bool) override {
    return std::make_unique<EchoConsole>(write_now_);
  }

 private:
  const bool write_now_;
};

// ---- the VNC bridge's ceiling
// ---------------------------------------------------------------------

// An RFB server that is never the bottleneck: 1920x1080, security None, and for every
// FramebufferUpdateRequest one whole Raw frame from a buffer made once.
void serve_rfb(int fd) {
  constexpr unsigned kWidth = 1920, kHeight = 1080;
  std::string frame("\x00\x00\x00\x01", 4);  // FramebufferUpdate, one rectangle
  frame += std::string("\x00\x00\x00\x00", 4);
  frame += static_cast<char>(kWidth >> 8);
  frame += static_cast<char>(kWidth & 0xff);
  frame += static_cast<char>(kHeight >> 8);
  frame += static_cast<char>(kHeight & 0xff);
  frame += std::string(4, '\0');  // Raw
  frame.resize(frame.size() + std::size_t{kWidth} * kHeight * 4, '\x5a');
  try {
    FdPipe pipe(fd);
    pipe.write_all("RFB 003.008\n");
    pipe.read_exact(12, 10s);
    pipe.write_all(std::string("\x01\x01", 2));
    pipe.read_exact(1, 10s);
    pipe.write_all(std::string(4, '\0'));
    pipe.read_exact(1, 10s);  // ClientInit
    std::string init;
    init += static_cast<char>(kWidth >> 8);
    init += static_cast<char>(kWidth & 0xff);
    init += static_cast<char>(kHeight >> 8);
    init += static_cast<char>(kHeight & 0xff);
    init += std::string("\x20\x18\x00\x01\x00\xff\x00\xff\x00\xff\x10\x08\x00\x00\x00\x00", 16);
    init += std::string(
        "\x00\x00\x00\x05"
        "bench",
        9);
    pipe.write_all(init);
    for (;;) {
      const auto type = static_cast<unsigned char>(pipe.read_exact(1, 60s)[0]);
      if (type == 0) {
        pipe.read_exact(19, 10s);  // SetPixelFormat
      } else if (type == 2) {
        const auto head = pipe.read_exact(3, 10s);
        pipe.read_exact(std::size_t{static_cast<unsigned char>(head[2])} * 4, 10s);
      } else if (type == 3) {
        pipe.read_exact(9, 10s);
        pipe.write_all(frame);
      } else {
        break;
      }
    }
  } catch (const std::exception&) {
    // The client went away: this connection is done.
  }
}

class RfbHost final : public BareHost {
 public:
  ~RfbHost() override {
    for (auto& t : servers_) t.join();
  }
  int open_graphics(const std::string&, unsigned, bool) override {
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
      throw libvirt::HypervisorError("socketpair failed");
    std::lock_guard lock(mutex_);
    servers_.emplace_back([fd = fds[1]] { serve_rfb(fd); });
    return fds[0];
  }

 private:
  std::mutex mutex_;
  std::vector<std::thread> servers_;
};

int vnc_capacity(int rounds, double seconds) {
  RfbHost host;
  api::HttpServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  // The VNC route's bridge (api::bridge_upgrade), without the checks before the upgrade.
  api::HttpServer server(options, [&host](api::Request&) {
    return api::bridge_upgrade(
        host.open_graphics("bench", 0, true), {},
        [](std::shared_ptr<api::SocketPeer>) { return std::uint64_t{0}; }, [](std::uint64_t) {});
  });
  server.start();
  const auto url = "http://127.0.0.1:" + std::to_string(server.port());
  const auto duration = std::chrono::milliseconds(static_cast<long>(seconds * 1000));
  constexpr int kInFlight = 2;
  std::vector<double> direct, bridge;
  nlohmann::json out;
  const auto one = [&](bool through_bridge) {
    std::unique_ptr<BytePipe> pipe;
    if (through_bridge)
      pipe = std::make_unique<WsPipe>(url, "/vnc", "bench");
    else
      pipe = std::make_unique<FdPipe>(host.open_graphics("bench", 0, true));
    RfbClient client(*pipe);
    const auto r = client.measure(duration, kInFlight);
    (through_bridge ? bridge : direct).push_back(static_cast<double>(r.bytes) / r.seconds);
    out["screen"] = std::to_string(r.width) + "x" + std::to_string(r.height);
    out["frame_bytes"] = r.updates ? r.bytes / r.updates : 0;
  };
  for (int round = 0; round < rounds; ++round) {
    one(round % 2 == 1);
    one(round % 2 == 0);
  }
  server.stop();
  out["direct_Bps"] = direct;
  out["bridge_Bps"] = bridge;
  out["direct_median_Bps"] = median(direct);
  out["bridge_median_Bps"] = median(bridge);
  out["ratio"] = median(direct) > 0 ? median(bridge) / median(direct) : 0;
  out["seconds"] = seconds;
  out["in_flight"] = kInFlight;
  std::cout << out.dump() << "\n";
  return 0;
}

// The echo console as a BytePipe: the "direct" side (no HTTP, no hub).
class StreamPipe final : public BytePipe {
 public:
  explicit StreamPipe(std::unique_ptr<util::ByteStream> s) : stream_(std::move(s)) {}
  void write_all(std::string_view bytes) override { stream_->write(bytes); }
  std::size_t read_some(char* out, std::size_t max, std::chrono::milliseconds timeout) override {
    const auto got = stream_->read(timeout, max);
    std::copy(got.begin(), got.end(), out);
    return got.size();
  }

 private:
  std::unique_ptr<util::ByteStream> stream_;
};

int console(int rounds, bool handover) {
  EchoHost host(!handover);
  api::ConsoleHub hub([&host](const std::string& key) { return host.open_console(key, {}, true); },
                      64 * 1024);
  // The console route's wiring (routes_access.cpp) without the checks before the upgrade.
  const std::string domain = "bench";
  api::HttpServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  api::HttpServer server(options, [&hub, domain](api::Request&) {
    struct Viewer {
      std::mutex mutex;
      std::optional<std::uint64_t> id;
    };
    auto viewer = std::make_shared<Viewer>();
    auto upgrade = std::make_shared<api::Upgrade>();
    upgrade->open = [&hub, domain, viewer](std::shared_ptr<api::SocketPeer> peer) {
      std::lock_guard lock(viewer->mutex);
      viewer->id = hub.attach(domain, std::move(peer));
    };
    upgrade->message = [&hub, domain](std::string bytes) { hub.input(domain, std::move(bytes)); };
    upgrade->close = [&hub, domain, viewer] {
      std::lock_guard lock(viewer->mutex);
      if (viewer->id) hub.detach(domain, *viewer->id);
    };
    api::Response response;
    response.upgrade = std::move(upgrade);
    return response;
  });
  server.start();

  std::vector<double> direct, bridge;
  {
    WsPipe ws("http://127.0.0.1:" + std::to_string(server.port()), "/console", "bench");
    StreamPipe plain(host.open_console(domain, {}, true));
    // Warm-up of both, then blocks that alternate between them.
    for (int i = 0; i < 50; ++i) {
      round_trip(plain, 'w');
      round_trip(ws, 'w');
    }
    // Short blocks: a burst of load on the host falls on both sides alike.
    constexpr int kBlock = 10;
    for (int done = 0; done < rounds;) {
      const int n = std::min(kBlock, rounds - done);
      for (int i = 0; i < n; ++i)
        direct.push_back(round_trip(plain, static_cast<char>('a' + i % 26)));
      for (int i = 0; i < n; ++i) bridge.push_back(round_trip(ws, static_cast<char>('a' + i % 26)));
      done += n;
    }
  }
  server.stop();
  nlohmann::json out;
  out["rounds"] = rounds;
  out["handover"] = handover;
  out["direct_p50_ms"] = percentile(direct, 0.50);
  out["direct_p99_ms"] = percentile(direct, 0.99);
  out["direct_max_ms"] = percentile(direct, 1.0);
  out["bridge_p50_ms"] = percentile(bridge, 0.50);
  out["bridge_p99_ms"] = percentile(bridge, 0.99);
  out["bridge_max_ms"] = percentile(bridge, 1.0);
  out["added_p50_ms"] = percentile(bridge, 0.50) - percentile(direct, 0.50);
  out["added_p99_ms"] = percentile(bridge, 0.99) - percentile(direct, 0.99);
  std::cout << out.dump() << "\n";
  return 0;
}

// ---- tunnel --------------------------------------------------------------------------------

int tunnel(int rounds, int megabytes) {
  TcpEcho echo;
  // The tunnel route's bridge (api::bridge_upgrade), without the checks before the upgrade.
  api::HttpServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  api::HttpServer server(options, [&echo](api::Request&) {
    return api::bridge_upgrade(
        util::tcp_connect("127.0.0.1", echo.port(), 5s), {.half_close = true, .filter_input = {}},
        [](std::shared_ptr<api::SocketPeer>) { return std::uint64_t{0}; }, [](std::uint64_t) {});
  });
  server.start();
  const auto url = "http://127.0.0.1:" + std::to_string(server.port());
  nlohmann::json out;
  std::vector<double> direct_bps, tunnel_bps, direct_ms, tunnel_ms;
  {
    FdPipe plain(util::tcp_connect("127.0.0.1", echo.port(), 5s));
    WsPipe ws(url, "/tunnel", "bench");
    const std::size_t total = static_cast<std::size_t>(megabytes) * 1024 * 1024;
    // Interleaved, so a burst of load on the host falls on both alike.
    for (int i = 0; i < 3; ++i) {
      direct_bps.push_back(echo_throughput(plain, total, 64 * 1024));
      tunnel_bps.push_back(echo_throughput(ws, total, 64 * 1024));
    }
    for (int i = 0; i < 50; ++i) {
      round_trip(plain, 'w');
      round_trip(ws, 'w');
    }
    constexpr int kBlock = 10;
    for (int done = 0; done < rounds; done += kBlock)
      for (int side = 0; side < 2; ++side)
        for (int i = 0; i < kBlock; ++i)
          (side ? tunnel_ms : direct_ms)
              .push_back(round_trip(side ? static_cast<BytePipe&>(ws) : plain,
                                    static_cast<char>('a' + i % 26)));
  }
  server.stop();
  out["megabytes_each_way"] = megabytes;
  out["direct_median_Bps"] = median(direct_bps);
  out["tunnel_median_Bps"] = median(tunnel_bps);
  out["throughput_ratio"] = median(tunnel_bps) / median(direct_bps);
  out["rounds"] = rounds;
  out["direct_p50_ms"] = percentile(direct_ms, 0.50);
  out["direct_p99_ms"] = percentile(direct_ms, 0.99);
  out["tunnel_p50_ms"] = percentile(tunnel_ms, 0.50);
  out["tunnel_p99_ms"] = percentile(tunnel_ms, 0.99);
  out["added_p50_ms"] = percentile(tunnel_ms, 0.50) - percentile(direct_ms, 0.50);
  out["added_p99_ms"] = percentile(tunnel_ms, 0.99) - percentile(direct_ms, 0.99);
  std::cout << out.dump() << "\n";
  return 0;
}

int usage() {
  std::cerr << "usage: bowline-bench-access vnc URI SERVER TOKEN SPACE_ID DOMAIN ROUNDS SECONDS\n"
               "       bowline-bench-access vnc-capacity ROUNDS SECONDS\n"
               "       bowline-bench-access console ROUNDS [handover]\n"
               "       bowline-bench-access tunnel ROUNDS MEGABYTES\n";
  return 2;
}

}  // namespace
}  // namespace bowline::bench

int main(int argc, char** argv) {
  using namespace bowline::bench;
  std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() == 8 && args[0] == "vnc")
      return vnc(args[1], args[2], args[3], args[4], args[5], std::stoi(args[6]),
                 std::stod(args[7]));
    if (args.size() == 3 && args[0] == "vnc-capacity")
      return vnc_capacity(std::stoi(args[1]), std::stod(args[2]));
    if (args.size() == 3 && args[0] == "tunnel")
      return tunnel(std::stoi(args[1]), std::stoi(args[2]));
    if ((args.size() == 2 || (args.size() == 3 && args[2] == "handover")) && args[0] == "console")
      return console(std::stoi(args[1]), args.size() == 3);
    return usage();
  } catch (const std::exception& e) {
    std::cerr << "bowline-bench-access: " << e.what() << "\n";
    return 1;
  }
}
