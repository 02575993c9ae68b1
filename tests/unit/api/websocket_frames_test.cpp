// The HTTP server's WebSockets on the wire: what a client receives, frame by frame.
#include <gtest/gtest.h>

#include "api/http_server.hpp"
#include "ws_test_client.hpp"

namespace bowline::api::testing {
namespace {

// A VNC bridge sends chunks of up to 256 KiB; each must leave as one frame (Beast's default
// cut messages into 4 KiB frames, each written on its own: a quarter of the throughput).
TEST(WebSocketFramesTest, ALargeMessageIsOneFrame) {
  std::string message(300 * 1024, '\0');
  for (std::size_t i = 0; i < message.size(); ++i) message[i] = static_cast<char>(i * 7);
  HttpServerOptions options;
  options.port = 0;
  HttpServer server(options, [&message](Request&) {
    auto upgrade = std::make_shared<Upgrade>();
    upgrade->open = [&message](std::shared_ptr<SocketPeer> peer) {
      peer->send(message);
      peer->send("and a small one");
    };
    Response response;
    response.upgrade = std::move(upgrade);
    return response;
  });
  server.start();
  {
    WsClient client(server.port(), "/ws", {});
    ASSERT_EQ(client.status(), 101) << client.body();
    const auto first = client.receive(10s);
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->size(), message.size());
    EXPECT_TRUE(*first == message);
    EXPECT_EQ(client.receive(10s), std::optional<std::string>("and a small one"));
  }
  server.stop();
}

}  // namespace
}  // namespace bowline::api::testing
