// bowline-bench-preview ROUNDS MEGABYTES: what a preview URL's relay costs against the tunnel
// that `bowline forward` rides on, one JSON line out. A TCP echo service on loopback (a
// guest's web app after an Upgrade) is reached three ways, interleaved:
//   direct   straight to it
//   forward  through HttpServer's tunnel route wiring (a WebSocket and SocketBridge, as the
//            CLI's forward uses it), as in bowline-bench-access tunnel
//   preview  through HttpServer's relay (a preview host's header-only request, rewritten, then
//            bytes both ways after its Upgrade), as routes_preview.cpp answers it
// Neither route runs its checks (the space, the pass): the figures are the data paths'.
// Throughput of MEGABYTES MiB echoed each way, and ROUNDS one-byte round trips; the targets are
// preview/forward >= 0.8 and preview's p99 at most 2 ms above forward's.
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "api/http_server.hpp"
#include "api/socket_bridge.hpp"
#include "byte_pipe.hpp"
#include "echo_measures.hpp"
#include "util/tcp_connect.hpp"

namespace bowline::bench {
namespace {

using namespace std::chrono_literals;
constexpr const char* kPreviewHost = "9000--bench--bench.preview.bench";

api::HttpServer forward_server(const TcpEcho& echo) {
  api::HttpServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  return api::HttpServer(options, [&echo](api::Request&) {
    return api::bridge_upgrade(
        util::tcp_connect("127.0.0.1", echo.port(), 5s), {.half_close = true, .filter_input = {}},
        [](std::shared_ptr<api::SocketPeer>) { return std::uint64_t{0}; }, [](std::uint64_t) {});
  });
}

// The preview's pipe: its Upgrade request, then the echo of that request (as the guest got
// it) read and dropped; what follows is bytes.
std::unique_ptr<FdPipe> preview_pipe(unsigned short port) {
  auto pipe = std::make_unique<FdPipe>(util::tcp_connect("127.0.0.1", port, 5s));
  pipe->write_all(std::string("GET /ws HTTP/1.1\r\nHost: ") + kPreviewHost +
                  "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
  std::string seen;
  while (seen.find("\r\n\r\n") == std::string::npos) seen += pipe->read_exact(1, 10s);
  if (seen.rfind("GET /ws HTTP/1.1", 0) != 0) throw std::runtime_error("preview: " + seen);
  return pipe;
}

int run(int rounds, int megabytes) {
  TcpEcho echo;
  auto forward = forward_server(echo);
  forward.start();
  api::HttpServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  options.header_only = [](std::string_view host) { return host == kPreviewHost; };
  api::HttpServer preview(options, [&echo](api::Request&) {
    api::Response response;
    response.relay = std::make_shared<api::Relay>();
    response.relay->fd = util::tcp_connect("127.0.0.1", echo.port(), 5s);
    response.relay->rewrite = [](api::HeaderFields& fields) {
      fields.emplace_back("X-Forwarded-For", "127.0.0.1");
    };
    return response;
  });
  preview.start();
  std::map<std::string, std::vector<double>> bps, ms;
  const std::vector<std::string> ways = {"direct", "forward", "preview"};
  {
    std::map<std::string, std::unique_ptr<BytePipe>> pipes;
    pipes["direct"] = std::make_unique<FdPipe>(util::tcp_connect("127.0.0.1", echo.port(), 5s));
    pipes["forward"] = std::make_unique<WsPipe>(
        "http://127.0.0.1:" + std::to_string(forward.port()), "/tunnel", "bench");
    pipes["preview"] = preview_pipe(preview.port());
    const std::size_t total = static_cast<std::size_t>(megabytes) * 1024 * 1024;
    for (int i = 0; i < 3; ++i)  // interleaved, so a burst of load falls on all alike
      for (const auto& way : ways)
        bps[way].push_back(echo_throughput(*pipes[way], total, 64 * 1024));
    for (int i = 0; i < 50; ++i)
      for (const auto& way : ways) round_trip(*pipes[way], 'w');
    constexpr int kBlock = 10;
    for (int done = 0; done < rounds; done += kBlock)
      for (const auto& way : ways)
        for (int i = 0; i < kBlock; ++i)
          ms[way].push_back(round_trip(*pipes[way], static_cast<char>('a' + i % 26)));
  }
  preview.stop();
  forward.stop();
  nlohmann::json out = {{"megabytes_each_way", megabytes}, {"rounds", rounds}};
  for (const auto& way : ways) {
    out[way + "_median_Bps"] = median(bps[way]);
    out[way + "_p50_ms"] = percentile(ms[way], 0.50);
    out[way + "_p99_ms"] = percentile(ms[way], 0.99);
  }
  out["preview_over_forward"] = median(bps["preview"]) / median(bps["forward"]);
  out["preview_over_direct"] = median(bps["preview"]) / median(bps["direct"]);
  out["added_p99_ms_over_forward"] =
      percentile(ms["preview"], 0.99) - percentile(ms["forward"], 0.99);
  out["added_p99_ms_over_direct"] =
      percentile(ms["preview"], 0.99) - percentile(ms["direct"], 0.99);
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace
}  // namespace bowline::bench

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: bowline-bench-preview ROUNDS MEGABYTES\n";
    return 2;
  }
  try {
    return bowline::bench::run(std::stoi(argv[1]), std::stoi(argv[2]));
  } catch (const std::exception& e) {
    std::cerr << "bowline-bench-preview: " << e.what() << "\n";
    return 1;
  }
}
