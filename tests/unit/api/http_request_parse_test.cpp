// What the server makes of a request's bytes (parse_request_bytes: the same parser, limits and
// conversion as on the wire), and bowline's own pieces of a request: targets, cookies, the
// client's address, whether the browser used HTTPS.
#include <gtest/gtest.h>

#include "api/http_server.hpp"
#include "api/web_session.hpp"

namespace bowline::api {
namespace {

TEST(ParseRequestBytesTest, ARequestBecomesWhatAHandlerSees) {
  const auto parsed = parse_request_bytes(
      "POST /api/v1/spaces%2Fx?a=1&b=%20c+d&a=2 HTTP/1.1\r\nHost: h\r\nX-Mixed-Case: V\r\n"
      "Content-Length: 2\r\n\r\n{}");
  ASSERT_EQ(parsed.status, 0) << parsed.error;
  ASSERT_FALSE(parsed.incomplete);
  EXPECT_EQ(parsed.request.method, "POST");
  EXPECT_EQ(parsed.request.path, "/api/v1/spaces/x");
  EXPECT_EQ(parsed.request.query.at("a"), "2");
  EXPECT_EQ(parsed.request.query.at("b"), " c d");
  EXPECT_EQ(parsed.request.header("x-mixed-case"), "V");
  EXPECT_EQ(parsed.request.headers.count("X-Mixed-Case"), 0u);
  EXPECT_EQ(parsed.request.body, "{}");
}

TEST(ParseRequestBytesTest, RefusalsAreTheServersAnswers) {
  EXPECT_EQ(
      parse_request_bytes("GET / HTTP/1.1\r\nHost: h\r\nX: " + std::string(17000, 'a') + "\r\n\r\n")
          .status,
      431);
  EXPECT_EQ(parse_request_bytes("POST / HTTP/1.1\r\nContent-Length: 1048577\r\n\r\n").status, 413);
  HttpServerOptions small;
  small.body_limit = 4;
  EXPECT_EQ(parse_request_bytes("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nabcde", small).status,
            413);
  EXPECT_EQ(parse_request_bytes("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                                "5\r\nabcde\r\n0\r\n\r\n",
                                small)
                .status,
            413);
  for (const char* bad :
       {"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        "GET / HTTP/1.1\r\nContent-Length: x\r\n\r\n",
        "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", "GET /\r\n\r\n",
        "GET / HTTP/1.1\r\nBad Header\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nX: a\rb\r\n\r\n", "GET /%zz HTTP/1.1\r\n\r\n",
        "GET /a%4 HTTP/1.1\r\n\r\n", "GET /?q=%G0 HTTP/1.1\r\n\r\n"}) {
    SCOPED_TRACE(bad);
    const auto parsed = parse_request_bytes(bad);
    EXPECT_EQ(parsed.status, 400) << parsed.error;
  }
}

TEST(ParseRequestBytesTest, AnUnfinishedRequestIsWaitedFor) {
  EXPECT_TRUE(parse_request_bytes("GET / HTTP/1.1\r\nHost: h\r\n").incomplete);
  EXPECT_TRUE(parse_request_bytes("POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc").incomplete);
  EXPECT_TRUE(parse_request_bytes("").incomplete);
}

TEST(CookieValueTest, FindsTheNamedCookieAmongOthers) {
  EXPECT_EQ(cookie_value("a=1; bowline_session=abc ; b=2", "bowline_session"), "abc");
  EXPECT_EQ(cookie_value("xbowline_session=abc", "bowline_session"), "");
  EXPECT_EQ(cookie_value("bowline_session", "bowline_session"), "");
  EXPECT_EQ(cookie_value(";;=;bowline_session==x", "bowline_session"), "=x");
}

TEST(ClientAddressTest, ForwardedForCountsOnlyFromATrustedProxy) {
  const std::vector<spec::Ipv4Network> proxies = {*spec::Ipv4Network::parse("10.0.0.0/8")};
  Request r;
  r.remote = "192.0.2.7:4000";
  r.headers["x-forwarded-for"] = "198.51.100.1";
  EXPECT_EQ(client_address(r, proxies), "192.0.2.7");
  r.remote = "10.1.2.3:4000";
  r.headers["x-forwarded-for"] = "203.0.113.9, 198.51.100.1, 10.9.9.9";
  EXPECT_EQ(client_address(r, proxies), "198.51.100.1");
  r.headers["x-forwarded-for"] = std::string(100, 'a');
  EXPECT_EQ(client_address(r, proxies), "10.1.2.3") << "no address is that long";
}

TEST(ServedOverHttpsTest, TheFirstHopsWordCounts) {
  Request r;
  EXPECT_FALSE(served_over_https(r));
  r.headers["x-forwarded-proto"] = "HTTPS, http";
  EXPECT_TRUE(served_over_https(r));
  r.headers.clear();
  r.headers["forwarded"] = "for=1.2.3.4;proto=\"https\", proto=http";
  EXPECT_TRUE(served_over_https(r));
  r.headers["forwarded"] = "proto=http, proto=https";
  EXPECT_FALSE(served_over_https(r));
}

}  // namespace
}  // namespace bowline::api
