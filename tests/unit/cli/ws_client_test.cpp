// The CLI's WebSocket client holds back a server that sends faster than its reader takes the
// messages (an export to a slow disk): it stops reading past its queue's limit, so the server,
// which paces itself by what waits in its queue, waits too instead of the CLI's memory growing
// to the archive's size; and every message still arrives, in order.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "api/http_server.hpp"
#include "cli/client.hpp"
#include "cli/ws_client.hpp"

namespace bowline::cli {
namespace {

using namespace std::chrono_literals;

constexpr int kMessages = 64;
constexpr std::size_t kMessage = 1 << 20;

TEST(WsClient, AReaderThatFallsBehindHoldsTheServerBack) {
  std::atomic<int> sent{0};
  std::atomic<bool> stop{false};
  std::thread sender;
  api::HttpServerOptions options;
  options.port = 0;
  api::HttpServer server(options, [&](api::Request&) {
    auto upgrade = std::make_shared<api::Upgrade>();
    upgrade->open = [&](std::shared_ptr<api::SocketPeer> peer) {
      // Paced as an export is: no more than 4 MiB waits at the server.
      sender = std::thread([&, peer] {
        for (int i = 0; i < kMessages && !stop; ++i) {
          while (peer->pending() > 4 * kMessage && !stop) std::this_thread::sleep_for(1ms);
          if (!peer->send(std::string(kMessage, static_cast<char>(i)))) return;
          ++sent;
        }
      });
    };
    api::Response response;
    response.upgrade = std::move(upgrade);
    return response;
  });
  server.start();
  Endpoint e;
  e.server = "http://127.0.0.1:" + std::to_string(server.port());
  e.server_from = "--server";
  e.token = "secret";
  {
    WsConnection ws(e, "/ws");
    std::this_thread::sleep_for(1500ms);  // nobody reads meanwhile
    // The client holds at most its 16 MiB and the sockets some more: the sender must wait.
    EXPECT_LT(sent, 40) << "the client read everything into memory";
    EXPECT_GT(sent, 8);
    for (int i = 0; i < kMessages; ++i) {
      const auto message = ws.read();
      ASSERT_TRUE(message) << "message " << i;
      ASSERT_EQ(message->size(), kMessage);
      ASSERT_EQ((*message)[0], static_cast<char>(i)) << "out of order";
    }
    EXPECT_EQ(sent, kMessages);
    ws.close();
  }
  stop = true;
  if (sender.joinable()) sender.join();
  server.stop();
}

}  // namespace
}  // namespace bowline::cli
