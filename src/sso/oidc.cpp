#include "sso/oidc.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include "util/curl.hpp"

namespace bowline::sso {

namespace {

std::string base64url(const unsigned char* data, std::size_t size) {
  std::string out(4 * ((size + 2) / 3) + 1, '\0');
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(size));
  out.resize(static_cast<std::size_t>(n));
  for (auto& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!out.empty() && out.back() == '=') out.pop_back();
  return out;
}

std::string base64url_decode(std::string text) {
  for (auto& c : text) c = c == '-' ? '+' : c == '_' ? '/' : c;
  while (text.size() % 4) text += '=';
  std::string out(text.size() / 4 * 3 + 1, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) throw OidcError("the ID token is not base64url");
  out.resize(static_cast<std::size_t>(n));
  while (!text.empty() && text.back() == '=') {  // EVP_DecodeBlock counts the padding's zeros
    text.pop_back();
    out.pop_back();
  }
  return out;
}

std::string form_encode(const Form& form) {
  std::string out;
  for (const auto& [key, value] : form) {
    char* k = curl_easy_escape(nullptr, key.c_str(), static_cast<int>(key.size()));
    char* v = curl_easy_escape(nullptr, value.c_str(), static_cast<int>(value.size()));
    out += (out.empty() ? "" : "&") + std::string(k) + "=" + std::string(v);
    curl_free(k);
    curl_free(v);
  }
  return out;
}

std::string text(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

class CurlProviderHttp final : public ProviderHttp {
 public:
  explicit CurlProviderHttp(ProviderSettings settings) : settings_(std::move(settings)) {}

  nlohmann::json get(const std::string& url, const std::string& bearer) override {
    util::CurlList headers;
    if (!bearer.empty())
      headers.reset(curl_slist_append(nullptr, ("Authorization: Bearer " + bearer).c_str()));
    const auto [status, body] = perform(url, nullptr, headers.get());
    if (status != 200) throw OidcError(url + " answered " + std::to_string(status));
    return body;
  }

  std::pair<long, nlohmann::json> post_form(const std::string& url, const Form& form) override {
    const auto text = form_encode(form);
    return perform(url, &text, nullptr);
  }

 private:
  std::pair<long, nlohmann::json> perform(const std::string& url, const std::string* form,
                                          curl_slist* headers) {
    auto handle = util::curl_easy();
    util::curl_request_basics(handle.get(), url, std::chrono::seconds(10));
    std::string body;
    curl_easy_setopt(handle.get(), CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(handle.get(), CURLOPT_WRITEFUNCTION, util::curl_append);
    curl_easy_setopt(handle.get(), CURLOPT_WRITEDATA, &body);
    if (headers) curl_easy_setopt(handle.get(), CURLOPT_HTTPHEADER, headers);
    if (!settings_.ca_file.empty())
      curl_easy_setopt(handle.get(), CURLOPT_CAINFO, settings_.ca_file.c_str());
    if (form) {
      curl_easy_setopt(handle.get(), CURLOPT_POSTFIELDS, form->c_str());
      curl_easy_setopt(handle.get(), CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
      curl_easy_setopt(handle.get(), CURLOPT_USERNAME, settings_.client_id.c_str());
      curl_easy_setopt(handle.get(), CURLOPT_PASSWORD, settings_.client_secret.c_str());
    }
    const auto code = curl_easy_perform(handle.get());
    if (code != CURLE_OK)
      throw OidcError("the identity provider did not answer (" + url +
                      "): " + curl_easy_strerror(code));
    long status = 0;
    curl_easy_getinfo(handle.get(), CURLINFO_RESPONSE_CODE, &status);
    auto json = nlohmann::json::parse(body, nullptr, false);
    if (json.is_discarded() || !json.is_object())
      throw OidcError(url + " answered " + std::to_string(status) + " without JSON");
    return {status, std::move(json)};
  }

  ProviderSettings settings_;
};

}  // namespace

std::unique_ptr<ProviderHttp> curl_provider_http(const ProviderSettings& settings) {
  return std::make_unique<CurlProviderHttp>(settings);
}

nlohmann::json jwt_claims(const std::string& jwt) {
  const auto first = jwt.find('.');
  const auto second = first == std::string::npos ? first : jwt.find('.', first + 1);
  if (second == std::string::npos) throw OidcError("the ID token is not a JWT");
  auto claims = nlohmann::json::parse(base64url_decode(jwt.substr(first + 1, second - first - 1)),
                                      nullptr, false);
  if (claims.is_discarded() || !claims.is_object())
    throw OidcError("the ID token's claims are not a JSON object");
  return claims;
}

void check_id_token(const nlohmann::json& claims, const ProviderSettings& settings,
                    std::int64_t now_seconds, const std::string& nonce) {
  if (text(claims, "iss") != settings.issuer)
    throw OidcError("the ID token's issuer is \"" + text(claims, "iss") + "\", not " +
                    settings.issuer);
  const auto aud = claims.find("aud");
  const bool many = aud != claims.end() && aud->is_array();
  bool ours = aud != claims.end() && aud->is_string() && *aud == settings.client_id;
  if (many)
    for (const auto& a : *aud) ours = ours || (a.is_string() && a == settings.client_id);
  if (!ours) throw OidcError("the ID token is not for this client (aud)");
  if (many && aud->size() > 1 && text(claims, "azp") != settings.client_id)
    throw OidcError("the ID token names another authorized party (azp)");
  const auto exp = claims.find("exp");
  if (exp == claims.end() || !exp->is_number() || exp->get<std::int64_t>() <= now_seconds)
    throw OidcError("the ID token has expired (exp)");
  if (text(claims, "sub").empty()) throw OidcError("the ID token names no subject (sub)");
  if (!nonce.empty() && text(claims, "nonce") != nonce)
    throw OidcError("the ID token's nonce is not this login's");
}

std::string random_text() {
  unsigned char bytes[32];
  if (RAND_bytes(bytes, sizeof bytes) != 1) throw OidcError("no random bytes");
  return base64url(bytes, sizeof bytes);
}

std::pair<std::string, std::string> pkce_pair() {
  auto verifier = random_text();
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(verifier.data()), verifier.size(), digest);
  return {std::move(verifier), base64url(digest, sizeof digest)};
}

OidcClient::OidcClient(ProviderSettings settings, std::unique_ptr<ProviderHttp> http)
    : settings_(std::move(settings)), http_(std::move(http)) {}

OidcClient::Endpoints OidcClient::endpoints() {
  std::lock_guard lock(mutex_);
  if (endpoints_) return *endpoints_;
  auto issuer = settings_.issuer;
  while (!issuer.empty() && issuer.back() == '/') issuer.pop_back();
  const auto found = http_->get(issuer + "/.well-known/openid-configuration", "");
  if (text(found, "issuer") != settings_.issuer)
    throw OidcError("the provider's discovery names the issuer \"" + text(found, "issuer") +
                    "\", not " + settings_.issuer);
  Endpoints e{text(found, "authorization_endpoint"), text(found, "token_endpoint"),
              text(found, "userinfo_endpoint"), text(found, "device_authorization_endpoint")};
  if (e.authorization.empty() || e.token.empty())
    throw OidcError("the provider's discovery lacks its authorization or token endpoint");
  endpoints_ = e;
  return e;
}

std::string OidcClient::authorization_url(const std::string& redirect_uri, const std::string& state,
                                          const std::string& nonce,
                                          const std::string& code_challenge) {
  const auto base = endpoints().authorization;
  return base + (base.find('?') == std::string::npos ? "?" : "&") +
         form_encode({{"response_type", "code"},
                      {"client_id", settings_.client_id},
                      {"redirect_uri", redirect_uri},
                      {"scope", settings_.scope},
                      {"state", state},
                      {"nonce", nonce},
                      {"code_challenge", code_challenge},
                      {"code_challenge_method", "S256"}});
}

Tokens OidcClient::tokens_from(long status, const nlohmann::json& body) {
  if (status != 200) {
    const auto why = text(body, "error_description").empty() ? text(body, "error")
                                                             : text(body, "error_description");
    throw OidcError("the identity provider refused: " +
                    (why.empty() ? std::to_string(status) : why));
  }
  Tokens tokens{text(body, "id_token"), text(body, "access_token")};
  if (tokens.id_token.empty()) throw OidcError("the identity provider gave no ID token");
  return tokens;
}

Tokens OidcClient::exchange_code(const std::string& code, const std::string& redirect_uri,
                                 const std::string& verifier) {
  const auto [status, body] =
      http_->post_form(endpoints().token, {{"grant_type", "authorization_code"},
                                           {"code", code},
                                           {"redirect_uri", redirect_uri},
                                           {"code_verifier", verifier}});
  return tokens_from(status, body);
}

DeviceStart OidcClient::start_device() {
  const auto url = endpoints().device_authorization;
  if (url.empty()) throw OidcError("the identity provider offers no device authorization");
  const auto [status, body] =
      http_->post_form(url, {{"client_id", settings_.client_id}, {"scope", settings_.scope}});
  if (status != 200 || text(body, "device_code").empty())
    throw OidcError("the identity provider refused a device login: " +
                    (text(body, "error").empty() ? std::to_string(status) : text(body, "error")));
  DeviceStart d{text(body, "device_code"), text(body, "user_code"), text(body, "verification_uri"),
                text(body, "verification_uri_complete")};
  if (body.contains("interval") && body["interval"].is_number_integer())
    d.interval = body["interval"];
  if (body.contains("expires_in") && body["expires_in"].is_number_integer())
    d.expires_in = body["expires_in"];
  return d;
}

std::optional<Tokens> OidcClient::poll_device(const std::string& device_code, bool& slow_down) {
  const auto [status, body] = http_->post_form(
      endpoints().token, {{"grant_type", "urn:ietf:params:oauth:grant-type:device_code"},
                          {"device_code", device_code}});
  const auto error = text(body, "error");
  slow_down = error == "slow_down";
  if (error == "authorization_pending" || slow_down) return std::nullopt;
  if (error == "access_denied") throw OidcError("the login was refused at the identity provider");
  if (error == "expired_token") throw OidcError("the login code expired: start again");
  return tokens_from(status, body);
}

nlohmann::json OidcClient::identity(const Tokens& tokens, std::int64_t now_seconds,
                                    const std::string& nonce) {
  auto claims = jwt_claims(tokens.id_token);
  check_id_token(claims, settings_, now_seconds, nonce);
  const auto userinfo = endpoints().userinfo;
  if (userinfo.empty() || tokens.access_token.empty()) return claims;
  const auto more = http_->get(userinfo, tokens.access_token);
  if (text(more, "sub") != text(claims, "sub"))
    throw OidcError("userinfo names another subject than the ID token");
  for (const auto& [key, value] : more.items())
    if (!claims.contains(key)) claims[key] = value;
  return claims;
}

}  // namespace bowline::sso
