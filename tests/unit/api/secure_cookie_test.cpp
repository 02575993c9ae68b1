// The session cookie's Secure attribute (server.secure_cookies): automatic by default (Secure
// when the browser came over HTTPS, as a TLS front end or the page's Origin says), or forced
// on or off; the same for the cookie that logging out clears.
#include <gtest/gtest.h>

#include "api_test_support.hpp"

namespace bowline::api::testing {
namespace {

class SecureCookieTest : public ::testing::Test {
 protected:
  // A server whose sessions use `secure` (nullopt: auto) and a user who may log in.
  void serve(std::optional<bool> secure) {
    if (server_) server_->stop();
    ApiOptions options;
    options.sessions.secure_cookie = secure;
    api_ = std::make_unique<Api>(stack_.store(), stack_.engine(), stack_.events(), options);
    server_ = std::make_unique<HttpServer>(ApiStack::test_http_options(),
                                           [this](Request& r) { return api_->handle(r); });
    server_->start();
  }
  ~SecureCookieTest() override {
    if (server_) server_->stop();
  }
  SecureCookieTest() {
    store::NewUser u;
    u.username = "erin";
    u.password_hash = hash_password("erin-password");
    stack_.store().users().create(u);
  }

  // The Set-Cookie of a login with these extra request headers.
  std::string login_cookie(const std::vector<std::string>& headers) {
    HttpClient client(server_->port());
    const auto r =
        client.request("POST", "/api/v1/session", "",
                       json{{"username", "erin"}, {"password", "erin-password"}}.dump(), headers);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.header("set-cookie");
  }
  // The Set-Cookie of a logout (no session: it clears the cookie all the same).
  std::string logout_cookie(const std::vector<std::string>& headers) {
    HttpClient client(server_->port());
    const auto r = client.request("DELETE", "/api/v1/session", "", "", headers);
    EXPECT_EQ(r.status, 204) << r.body;
    return r.header("set-cookie");
  }
  static bool secure(const std::string& set_cookie) {
    return set_cookie.find("; Secure") != std::string::npos;
  }

  ApiStack stack_;
  std::unique_ptr<Api> api_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(SecureCookieTest, AutoAddsSecureOnlyWhenTheBrowserCameOverHttps) {
  serve(std::nullopt);
  const auto plain = login_cookie({"Origin: http://127.0.0.1"});
  EXPECT_FALSE(secure(plain)) << plain;
  EXPECT_NE(plain.find("; HttpOnly; SameSite=Strict; Path=/"), std::string::npos) << plain;
  EXPECT_FALSE(secure(login_cookie({})));

  for (const std::string header : {"X-Forwarded-Proto: https", "X-Forwarded-Proto: HTTPS, http",
                                   "Forwarded: for=192.0.2.60;proto=https;by=203.0.113.43",
                                   "Forwarded: proto=\"https\"", "Origin: https://127.0.0.1"}) {
    EXPECT_TRUE(secure(login_cookie({header}))) << header;
    EXPECT_TRUE(secure(logout_cookie({header}))) << header;
  }
  // The browser-facing hop is the first one; a later https hop does not count.
  for (const std::string header : {"X-Forwarded-Proto: http", "X-Forwarded-Proto: http, https",
                                   "Forwarded: proto=http, proto=https",
                                   "Forwarded: for=\"proto=https\"", "Origin: http://127.0.0.1"}) {
    EXPECT_FALSE(secure(login_cookie({header}))) << header;
    EXPECT_FALSE(secure(logout_cookie({header}))) << header;
  }
  EXPECT_FALSE(secure(logout_cookie({"Origin: http://https.example"})));
}

// A Secure cookie is named __Host- (HTTPS pages only, this host only, every path), and where
// cookies are Secure the plain name is not taken: a page over plain HTTP, or a guest's service
// on another port of the host, could have set it.
class security_session_cookie : public SecureCookieTest {};

TEST_F(security_session_cookie, ASecureCookieIsAHostCookieAndThePlainNameIsNotTakenThen) {
  serve(true);
  const auto set = login_cookie({});
  ASSERT_EQ(set.rfind("__Host-bowline_session=", 0), 0u) << set;
  EXPECT_NE(set.find("; Path=/"), std::string::npos);
  EXPECT_EQ(set.find("Domain"), std::string::npos);
  EXPECT_TRUE(secure(set));
  const auto secret = set.substr(set.find('=') + 1, 64);
  HttpClient client(server_->port());
  EXPECT_EQ(
      client.request("GET", "/api/v1/session", "", "", {"Cookie: __Host-bowline_session=" + secret})
          .status,
      200);
  EXPECT_EQ(client.request("GET", "/api/v1/session", "", "", {"Cookie: bowline_session=" + secret})
                .status,
            401);
  EXPECT_EQ(logout_cookie({}).rfind("__Host-bowline_session=;", 0), 0u);
  // Automatic: __Host- once the browser came over HTTPS, the plain name over plain HTTP.
  serve(std::nullopt);
  EXPECT_EQ(login_cookie({"X-Forwarded-Proto: https"}).rfind("__Host-bowline_session=", 0), 0u);
  EXPECT_EQ(login_cookie({}).rfind("bowline_session=", 0), 0u);
}

TEST_F(security_session_cookie, ALoginFromAnotherSitesPageIsRefused) {
  serve(std::nullopt);
  HttpClient client(server_->port());
  const auto r = client.request("POST", "/api/v1/session", "",
                                json{{"username", "erin"}, {"password", "erin-password"}}.dump(),
                                {"Origin: https://evil.example"});
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_TRUE(r.header("set-cookie").empty());
}

TEST_F(SecureCookieTest, TrueAndFalseDecideWhateverTheRequestSays) {
  serve(true);
  EXPECT_TRUE(secure(login_cookie({})));
  EXPECT_TRUE(secure(login_cookie({"Origin: http://127.0.0.1"})));
  EXPECT_TRUE(secure(logout_cookie({})));
  serve(false);
  EXPECT_FALSE(secure(login_cookie({"X-Forwarded-Proto: https"})));
  EXPECT_FALSE(secure(logout_cookie({"Origin: https://bowline.example"})));
}

}  // namespace
}  // namespace bowline::api::testing
