// bowline's own HTTPS (HttpServerOptions::tls): the given certificate is served, plain HTTP on
// the port is answered with an error, HTTPS answers carry Strict-Transport-Security, the
// session cookie is Secure, and event streams and WebSockets run over TLS on the same code.
#include <gtest/gtest.h>

#include "../common/scratch_files.hpp"
#include "../common/test_certificates.hpp"
#include "tls_relay.hpp"
#include "util/tls_fingerprint.hpp"
#include "ws_test_client.hpp"

namespace bowline::api::testing {
namespace {

using test_support::make_test_certificate;
using test_support::read_file;

HttpServerOptions tls_options(const test_support::TestCertificate& cert) {
  auto options = ApiStack::test_http_options();
  options.tls = TlsFiles{cert.cert.string(), cert.key.string()};
  return options;
}

class security_tls : public ::testing::Test {
 protected:
  security_tls()
      : cert_(make_test_certificate(certs_.path(), "server")),
        stack_(tls_options(cert_)),
        relay_(stack_.port()) {}

  test_support::TempDir certs_;
  test_support::TestCertificate cert_;
  ApiStack stack_;
  TlsRelay relay_;
};

TEST_F(security_tls, ServesTheGivenCertificateWithStrictTransportSecurity) {
  HttpClient client(relay_.port());
  const auto r = client.get("/api/v1/whoami", stack_.admin_token());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.parsed()["username"], "admin") << r.body;
  EXPECT_EQ(r.header("strict-transport-security"), "max-age=31536000");
  EXPECT_EQ(relay_.server_fingerprint(),
            util::pem_certificate_fingerprint(read_file(cert_.cert.string())));
  // Keep-alive works over TLS as over TCP: a second request on the same connection.
  EXPECT_EQ(client.get("/api/v1/whoami", stack_.admin_token()).status, 200);
  EXPECT_TRUE(client.connected());
  // Errors too say HSTS.
  const auto missing = client.get("/api/v1/no-such-route", stack_.admin_token());
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.header("strict-transport-security"), "max-age=31536000");
}

TEST_F(security_tls, PlainHttpOnTheHttpsPortGetsAnErrorAndNothingElse) {
  HttpClient plain(stack_.port());
  const auto r = plain.get("/api/v1/whoami", stack_.admin_token());
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("HTTPS only"), std::string::npos) << r.body;
  EXPECT_EQ(r.header("strict-transport-security"), "") << "not over plain HTTP";
  EXPECT_FALSE(plain.connected()) << "the connection ends after the answer";
}

TEST_F(security_tls, TheSessionCookieIsSecureOverHttps) {
  store::NewUser u;
  u.username = "erin";
  u.password_hash = hash_password("erin-password");
  stack_.store().users().create(u);
  HttpClient client(relay_.port());
  // No Origin or X-Forwarded-Proto: the connection alone says HTTPS.
  const auto r = client.request("POST", "/api/v1/session", "",
                                json{{"username", "erin"}, {"password", "erin-password"}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.header("set-cookie").find("; Secure"), std::string::npos) << r.header("set-cookie");
  EXPECT_EQ(r.header("strict-transport-security"), "max-age=31536000");
}

TEST_F(security_tls, EventStreamsRunOverTls) {
  SseStream events(relay_.port(), stack_.admin_token(), "/api/v1/events");
  EXPECT_EQ(events.status(), 200) << events.head();
  EXPECT_NE(events.head().find("Strict-Transport-Security: max-age=31536000"), std::string::npos)
      << events.head();
  events.drain(700ms);
  EXPECT_FALSE(events.comments().empty()) << "heartbeats arrive through TLS";
}

// A WebSocket on an HTTPS server: the upgrade and frames both ways go through TLS, on the
// same session code as plain HTTP's.
TEST(security_tls_websocket, FramesBothWaysOverTls) {
  test_support::TempDir dir;
  const auto cert = make_test_certificate(dir.path(), "ws");
  HttpServerOptions options;
  options.port = 0;
  options.tls = TlsFiles{cert.cert.string(), cert.key.string()};
  HttpServer server(options, [](Request& request) {
    EXPECT_TRUE(request.tls);
    auto upgrade = std::make_shared<Upgrade>();
    auto peer = std::make_shared<std::shared_ptr<SocketPeer>>();
    upgrade->open = [peer](std::shared_ptr<SocketPeer> p) {
      *peer = p;
      p->send("hello over tls");
    };
    upgrade->message = [peer](std::string bytes) { (*peer)->send("echo: " + bytes); };
    Response response;
    response.upgrade = std::move(upgrade);
    return response;
  });
  server.start();
  {
    TlsRelay relay(server.port());
    WsClient client(relay.port(), "/ws", {});
    ASSERT_EQ(client.status(), 101) << client.body();
    EXPECT_EQ(client.receive(10s), std::optional<std::string>("hello over tls"));
    const std::string big(100 * 1024, 'x');
    client.send(big);
    const auto echo = client.receive(10s);
    ASSERT_TRUE(echo.has_value());
    EXPECT_EQ(*echo, "echo: " + big);
  }
  server.stop();
}

TEST(security_tls_files, AMissingOrForeignKeyStopsTheStartWithTheFileNamed) {
  test_support::TempDir dir;
  const auto a = make_test_certificate(dir.path(), "a");
  const auto b = make_test_certificate(dir.path(), "b");
  const auto start = [](const std::string& cert, const std::string& key) -> std::string {
    HttpServerOptions options;
    options.port = 0;
    options.tls = TlsFiles{cert, key};
    HttpServer server(options, [](Request&) { return Response::no_content(); });
    try {
      server.start();
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    server.stop();
    return "started";
  };
  EXPECT_EQ(start(a.cert.string(), a.key.string()), "started");
  const auto missing = start((dir.path() / "none.pem").string(), a.key.string());
  EXPECT_NE(missing.find("cannot load the TLS certificate " + (dir.path() / "none.pem").string()),
            std::string::npos)
      << missing;
  const auto foreign = start(a.cert.string(), b.key.string());
  EXPECT_NE(foreign.find(b.key.string()), std::string::npos) << foreign;
}

}  // namespace
}  // namespace bowline::api::testing
