// The OpenID Connect client's logic without a provider: an ID token's claims checked one by
// one, PKCE's S256, and the client's answers to what a provider says (a fake ProviderHttp):
// discovery naming another issuer, refusals with their words, the device flow's pending,
// slow_down and denial, and userinfo that names another subject.
#include "sso/oidc.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <deque>

namespace bowline::sso {
namespace {

using nlohmann::json;

ProviderSettings settings() {
  ProviderSettings s;
  s.issuer = "https://id.example";
  s.client_id = "bowline";
  s.client_secret = "secret";
  return s;
}

json good_claims() {
  return {{"iss", "https://id.example"},
          {"aud", "bowline"},
          {"sub", "s-1"},
          {"exp", 2000},
          {"nonce", "n-1"}};
}

std::string b64url(const std::string& text) {
  std::string out(4 * ((text.size() + 2) / 3) + 1, '\0');
  out.resize(static_cast<std::size_t>(EVP_EncodeBlock(
      reinterpret_cast<unsigned char*>(out.data()),
      reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()))));
  for (auto& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!out.empty() && out.back() == '=') out.pop_back();
  return out;
}

std::string jwt(const json& claims) {
  return b64url(R"({"alg":"RS256"})") + "." + b64url(claims.dump()) + ".c2lnbmF0dXJl";
}

std::string what(const std::function<void()>& f) {
  try {
    f();
  } catch (const OidcError& e) {
    return e.what();
  }
  return "";
}

TEST(IdToken, GoodClaimsPass) {
  EXPECT_EQ(what([] { check_id_token(good_claims(), settings(), 1000, "n-1"); }), "");
  auto many = good_claims();
  many["aud"] = {"other", "bowline"};
  many["azp"] = "bowline";
  EXPECT_EQ(what([&] { check_id_token(many, settings(), 1000, "n-1"); }), "");
}

TEST(IdToken, EachBadClaimIsNamed) {
  auto c = good_claims();
  c["iss"] = "https://evil.example";
  EXPECT_NE(what([&] { check_id_token(c, settings(), 1000, "n-1"); }).find("issuer"),
            std::string::npos);
  c = good_claims();
  c["aud"] = "someone-else";
  EXPECT_NE(what([&] { check_id_token(c, settings(), 1000, "n-1"); }).find("aud"),
            std::string::npos);
  c = good_claims();
  c["aud"] = {"other", "bowline"};
  EXPECT_NE(what([&] { check_id_token(c, settings(), 1000, "n-1"); }).find("azp"),
            std::string::npos);
  EXPECT_NE(what([&] { check_id_token(good_claims(), settings(), 2000, "n-1"); }).find("expired"),
            std::string::npos);
  EXPECT_NE(what([&] { check_id_token(good_claims(), settings(), 1000, "n-2"); }).find("nonce"),
            std::string::npos);
  c = good_claims();
  c.erase("sub");
  EXPECT_NE(what([&] { check_id_token(c, settings(), 1000, "n-1"); }).find("sub"),
            std::string::npos);
}

TEST(IdToken, ClaimsComeOutOfTheJwtsMiddlePart) {
  EXPECT_EQ(jwt_claims(jwt(good_claims())), good_claims());
  EXPECT_NE(what([] { jwt_claims("no-dots"); }), "");
  EXPECT_NE(what([] { jwt_claims("a." + b64url("[1,2]") + ".c"); }), "");
}

TEST(Pkce, TheChallengeIsTheVerifiersSha256) {
  const auto [verifier, challenge] = pkce_pair();
  EXPECT_GE(verifier.size(), 43u);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(verifier.data()), verifier.size(), digest);
  EXPECT_EQ(challenge, b64url(std::string(reinterpret_cast<char*>(digest), sizeof digest)));
  EXPECT_NE(pkce_pair().first, verifier);
}

// A provider that answers from a script, and remembers what it was asked.
class ScriptedProvider final : public ProviderHttp {
 public:
  json discovery = {{"issuer", "https://id.example"},
                    {"authorization_endpoint", "https://id.example/auth"},
                    {"token_endpoint", "https://id.example/token"},
                    {"userinfo_endpoint", "https://id.example/me"},
                    {"device_authorization_endpoint", "https://id.example/device"}};
  json userinfo = {{"sub", "s-1"}, {"preferred_username", "carol"}, {"groups", {"developers"}}};
  std::deque<std::pair<long, json>> posts;
  std::vector<Form> asked;

  json get(const std::string& url, const std::string&) override {
    return url.ends_with("openid-configuration") ? discovery : userinfo;
  }
  std::pair<long, json> post_form(const std::string&, const Form& form) override {
    asked.push_back(form);
    auto next = posts.front();
    posts.pop_front();
    return next;
  }
};

TEST(OidcClient, DiscoveryMustNameTheIssuer) {
  auto http = std::make_unique<ScriptedProvider>();
  http->discovery["issuer"] = "https://evil.example";
  OidcClient client(settings(), std::move(http));
  EXPECT_NE(what([&] { client.authorization_url("https://b/cb", "s", "n", "c"); }).find("evil"),
            std::string::npos);
}

TEST(OidcClient, TheAuthorizationUrlCarriesStateNonceAndChallenge) {
  OidcClient client(settings(), std::make_unique<ScriptedProvider>());
  const auto url =
      client.authorization_url("https://b.example/api/v1/sso/callback", "st", "no", "ch");
  EXPECT_EQ(url.rfind("https://id.example/auth?response_type=code&client_id=bowline", 0), 0u)
      << url;
  for (const char* part : {"redirect_uri=https%3A%2F%2Fb.example%2Fapi%2Fv1%2Fsso%2Fcallback",
                           "state=st", "nonce=no", "code_challenge=ch",
                           "code_challenge_method=S256", "scope=openid%20profile%20email%20groups"})
    EXPECT_NE(url.find(part), std::string::npos) << part << " in " << url;
}

TEST(OidcClient, ARefusalSaysTheProvidersWords) {
  auto http = std::make_unique<ScriptedProvider>();
  http->posts.push_back({400, {{"error", "invalid_grant"}, {"error_description", "code expired"}}});
  OidcClient client(settings(), std::move(http));
  EXPECT_EQ(what([&] { client.exchange_code("c", "https://b/cb", "v"); }),
            "the identity provider refused: code expired");
}

TEST(OidcClient, TheDeviceFlowWaitsSlowsDownAndEnds) {
  auto http = std::make_unique<ScriptedProvider>();
  auto* script = http.get();
  http->posts.push_back({200,
                         {{"device_code", "d"},
                          {"user_code", "ABCD"},
                          {"verification_uri", "https://id.example/device"},
                          {"interval", 3}}});
  http->posts.push_back({400, {{"error", "authorization_pending"}}});
  http->posts.push_back({400, {{"error", "slow_down"}}});
  http->posts.push_back({200, {{"id_token", jwt(good_claims())}, {"access_token", "at"}}});
  http->posts.push_back({400, {{"error", "access_denied"}}});
  OidcClient client(settings(), std::move(http));
  const auto start = client.start_device();
  EXPECT_EQ(start.user_code, "ABCD");
  EXPECT_EQ(start.interval, 3);
  bool slow = false;
  EXPECT_FALSE(client.poll_device("d", slow));
  EXPECT_FALSE(slow);
  EXPECT_FALSE(client.poll_device("d", slow));
  EXPECT_TRUE(slow);
  const auto tokens = client.poll_device("d", slow);
  ASSERT_TRUE(tokens);
  EXPECT_EQ(tokens->access_token, "at");
  EXPECT_EQ(script->asked.back().front().second, "urn:ietf:params:oauth:grant-type:device_code");
  EXPECT_NE(what([&] { client.poll_device("d", slow); }).find("refused"), std::string::npos);
}

TEST(OidcClient, IdentityAddsUserinfoOfTheSameSubjectOnly) {
  auto http = std::make_unique<ScriptedProvider>();
  auto* script = http.get();
  OidcClient client(settings(), std::move(http));
  const Tokens tokens{jwt(good_claims()), "at"};
  const auto who = client.identity(tokens, 1000, "n-1");
  EXPECT_EQ(who["preferred_username"], "carol");
  EXPECT_EQ(who["iss"], "https://id.example");
  script->userinfo["sub"] = "s-2";
  EXPECT_NE(what([&] { client.identity(tokens, 1000, "n-1"); }).find("another subject"),
            std::string::npos);
}

}  // namespace
}  // namespace bowline::sso
