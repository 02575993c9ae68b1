// The HTTP layer: keep-alive, the body limit, malformed requests, methods, 100-continue.
#include <gtest/gtest.h>

#include <future>

#include "api/router.hpp"
#include "api_test_support.hpp"

namespace bowline::api::testing {
namespace {

class HttpTest : public ::testing::Test {
 protected:
  ApiStack stack_;
};

TEST_F(HttpTest, KeepAliveServesManyRequestsOnOneConnection) {
  HttpClient client(stack_.port());
  for (int i = 0; i < 20; ++i) {
    const auto r = client.get("/api/v1/whoami", stack_.admin_token());
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.header("content-type"), "application/json");
  }
  EXPECT_TRUE(client.connected());
  EXPECT_EQ(stack_.server().open_connections(), 1u);
  // HTTP/1.0 without keep-alive: one answer, then the server closes.
  const auto old = client.send_raw("GET /api/v1/whoami HTTP/1.0\r\nAuthorization: Bearer " +
                                   stack_.admin_token() + "\r\n\r\n");
  EXPECT_EQ(old.status, 200);
}

TEST_F(HttpTest, BodiesOverOneMebibyteAre413) {
  HttpClient client(stack_.port());
  const std::string big(1024 * 1024 + 1, 'x');
  const auto r = client.request("POST", "/api/v1/templates/validate", stack_.admin_token(), big);
  EXPECT_EQ(r.status, 413) << r.body;
  EXPECT_NE(r.parsed()["error"].get<std::string>().find("larger than"), std::string::npos);
  // Just under the limit is read (and then refused for what it says).
  HttpClient again(stack_.port());
  const std::string fits = "{\"yaml\": \"" + std::string(1024 * 1024 - 20, 'a') + "\"}";
  const auto ok = again.request("POST", "/api/v1/templates/validate", stack_.admin_token(), fits);
  EXPECT_EQ(ok.status, 422) << ok.body.substr(0, 200);  // larger than a template may be
}

TEST_F(HttpTest, ExpectContinueGetsAnInterimAnswer) {
  HttpClient client(stack_.port());
  const std::string body = R"({"yaml": "name: x\n"})";
  const auto r = client.send_raw(
      "POST /api/v1/templates/validate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " +
      stack_.admin_token() + "\r\nExpect: 100-continue\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(HttpTest, MalformedRequestsAre400) {
  HttpClient client(stack_.port());
  const auto r = client.send_raw("THIS IS NOT HTTP\r\n\r\n");
  EXPECT_EQ(r.status, 400) << r.body;
  HttpClient escape(stack_.port());
  EXPECT_EQ(escape.get("/api/v1/templates/%zz", stack_.admin_token()).status, 400);
}

TEST_F(HttpTest, UnknownPathsAndWrongMethods) {
  HttpClient client(stack_.port());
  const auto& token = stack_.admin_token();
  EXPECT_EQ(client.get("/", token).status, 404);
  EXPECT_EQ(client.get("/api/v2/whoami", token).status, 404);
  const auto r = client.request("DELETE", "/api/v1/whoami", token);
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.header("allow"), "GET");
  const auto metrics = client.get("/metrics", token);
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("bowline_spaces{state=\"running\"} 0"), std::string::npos)
      << metrics.body;
  const auto nodes = client.get("/api/v1/nodes", token);
  ASSERT_EQ(nodes.status, 200);
  EXPECT_EQ(nodes.parsed()[0]["name"], "local");
}

// ---- security: what a hostile client does to the socket (ctest -L security) ------------------

// A server of its own with one plain answer, so its limits can be small.
class security_http : public ::testing::Test {
 protected:
  // `authenticated`: every answer says its request had a valid credential. "/slow" answers
  // after two seconds, worked out off the workers (Response::deferred).
  void start(HttpServerOptions options, bool authenticated = false) {
    options.port = 0;
    server_ = std::make_unique<HttpServer>(options, [authenticated](Request& request) {
      auto response = Response::json(200, {{"ok", true}});
      if (request.path == "/slow")
        response = Response::deferred([] {
          std::this_thread::sleep_for(2s);
          return Response::json(200, {{"slow", true}});
        });
      response.authenticated = authenticated;
      return response;
    });
    server_->start();
  }
  // Whether the server ends the connection `fd` within `within`.
  static bool closed_within(int fd, std::chrono::milliseconds within) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < deadline) {
      bool eof = false;
      try {
        receive_some(fd, 100ms, &eof);
      } catch (const std::exception&) {
        return true;  // reset
      }
      if (eof) return true;
    }
    return false;
  }
  std::unique_ptr<HttpServer> server_;
};

// Slowloris: a header sent a byte at a time, and a connection that never sends one, are both
// closed at the header timeout; a prompt client is served meanwhile.
TEST_F(security_http, AHeaderThatNeverEndsIsCutOffAtTheHeaderTimeout) {
  HttpServerOptions options;
  options.header_timeout = 500ms;
  start(options);
  const int silent = connect_to(server_->port());
  const int trickle = connect_to(server_->port());
  const auto began = std::chrono::steady_clock::now();
  bool trickle_closed = false;
  for (const char c : std::string("GET /api/v1/whoami HTTP/1.1\r\nHost: x\r\nX-Slow: ")) {
    try {
      send_all(trickle, std::string(1, c));
    } catch (const std::exception&) {
      trickle_closed = true;
      break;
    }
    std::this_thread::sleep_for(30ms);
  }
  HttpClient prompt(server_->port());
  EXPECT_EQ(prompt.get("/api/v1/x", "").status, 200);
  EXPECT_TRUE(closed_within(silent, 3s));
  EXPECT_TRUE(trickle_closed || closed_within(trickle, 3s));
  EXPECT_LT(std::chrono::steady_clock::now() - began, 4s);
  ::close(silent);
  ::close(trickle);
}

// Beyond max_connections, with every open one authenticated, a new connection is closed at
// once; those open are still served, and a place that frees up is taken again.
TEST_F(security_http, ConnectionsBeyondTheCapAreClosedAndTheOpenOnesServed) {
  HttpServerOptions options;
  options.max_connections = 4;
  start(options, /*authenticated=*/true);
  std::vector<std::unique_ptr<HttpClient>> open;
  for (int i = 0; i < 4; ++i) {
    open.push_back(std::make_unique<HttpClient>(server_->port()));
    ASSERT_EQ(open.back()->get("/x", "").status, 200);
  }
  const int extra = connect_to(server_->port());
  EXPECT_TRUE(closed_within(extra, 2s));
  ::close(extra);
  for (auto& client : open) EXPECT_EQ(client->get("/x", "").status, 200);
  open.pop_back();  // its connection closes
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (server_->open_connections() >= 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  HttpClient again(server_->port());
  EXPECT_EQ(again.get("/x", "").status, 200);
}

// Connections that never finish a header, far more than the cap: a fresh client is still
// answered at once (the oldest strangers are shed for it), and the count stays under the cap.
TEST_F(security_http, AFloodOfHeaderlessConnectionsCannotKeepAFreshClientOut) {
  HttpServerOptions options;
  options.max_connections = 64;
  start(options);
  std::vector<int> flood;
  for (int i = 0; i < 300; ++i) {
    flood.push_back(connect_to(server_->port()));
    send_all(flood.back(), "GET /x HTTP/1.1\r\nHost: x\r\n");  // and never the end
  }
  const auto began = std::chrono::steady_clock::now();
  HttpClient fresh(server_->port());
  EXPECT_EQ(fresh.get("/x", "").status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - began, 1s);
  EXPECT_LE(server_->open_connections(), 64u);
  for (const int fd : flood) ::close(fd);
}

// Answers that wait on something (Response::deferred) hold no worker: with one worker and
// three slow answers pending, a quick request is answered at once; the slow ones follow.
TEST_F(security_http, DeferredAnswersLeaveTheWorkersFree) {
  HttpServerOptions options;
  options.workers = 1;
  start(options);
  std::vector<std::future<int>> slow;
  for (int i = 0; i < 3; ++i)
    slow.push_back(std::async(std::launch::async, [this] {
      HttpClient client(server_->port());
      return client.get("/slow", "").status;
    }));
  std::this_thread::sleep_for(200ms);
  const auto began = std::chrono::steady_clock::now();
  HttpClient quick(server_->port());
  EXPECT_EQ(quick.get("/x", "").status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - began, 1s);  // not after the slow ones (6 s)
  for (auto& answer : slow) EXPECT_EQ(answer.get(), 200);
}

TEST(RouterTest, LiteralSegmentsWinAndParametersAreDecoded) {
  Router router;
  router.add("GET", "/api/v1/templates/{name}", Access::Any,
             [](const Caller&, const Request& r) { return Response::json(200, r.param("name")); });
  router.add("POST", "/api/v1/templates/validate", Access::Any,
             [](const Caller&, const Request&) { return Response::json(200, "validate"); });
  router.add("POST", "/api/v1/templates/{name}", Access::Any,
             [](const Caller&, const Request&) { return Response::json(200, "post"); });
  Request r;
  r.method = "POST";
  parse_target("/api/v1/templates/validate?x=1", r.path, r.query);
  auto m = router.match(r);
  ASSERT_TRUE(m.route);
  EXPECT_EQ(m.route->pattern, "/api/v1/templates/validate");
  r.method = "GET";
  parse_target("/api/v1/templates/my%20t?all=1&a+b=c%2Bd", r.path, r.query);
  m = router.match(r);
  ASSERT_TRUE(m.route);
  EXPECT_EQ(r.param("name"), "my t");
  EXPECT_EQ(r.query["all"], "1");
  EXPECT_EQ(r.query["a b"], "c+d");
  r.method = "PUT";
  m = router.match(r);
  EXPECT_FALSE(m.route);
  EXPECT_EQ(m.allowed, (std::vector<std::string>{"GET", "POST"}));
  EXPECT_THROW(percent_decode("%4", false), HttpError);
}

TEST(ListenAddressTest, Splits) {
  EXPECT_EQ(split_listen_address("127.0.0.1:7470"),
            (std::pair<std::string, unsigned short>{"127.0.0.1", 7470}));
  EXPECT_EQ(split_listen_address("[::1]:80"), (std::pair<std::string, unsigned short>{"::1", 80}));
  EXPECT_THROW(split_listen_address("localhost:80"), std::invalid_argument);
  EXPECT_THROW(split_listen_address("127.0.0.1"), std::invalid_argument);
  EXPECT_THROW(split_listen_address("127.0.0.1:70000"), std::invalid_argument);
  EXPECT_THROW(split_listen_address(":80"), std::invalid_argument);
}

}  // namespace
}  // namespace bowline::api::testing
