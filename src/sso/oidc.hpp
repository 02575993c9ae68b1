// OpenID Connect as bowline speaks it: a confidential client of one provider, with discovery,
// the authorization code flow with PKCE (the web UI), the device authorization flow (the CLI)
// and userinfo, and the checks of an ID token's claims. The ID token comes straight from the
// token endpoint over TLS, so TLS vouches for its issuer and no signature is checked (OpenID
// Connect Core 3.1.3.7, step 6); its claims still are. The provider's HTTP is a seam
// (ProviderHttp): libcurl in the server, a fake in the unit tests.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace bowline::sso {

struct ProviderSettings {
  std::string issuer;  // discovery at ISSUER/.well-known/openid-configuration
  std::string client_id;
  std::string client_secret;
  std::string ca_file;  // the provider's CA (PEM); empty: the system's trust store
  std::string scope = "openid profile email groups";
};

// What went wrong with the provider or its answer, in words for the person logging in.
class OidcError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Form = std::vector<std::pair<std::string, std::string>>;

class ProviderHttp {
 public:
  virtual ~ProviderHttp() = default;
  // GET of JSON, with a bearer token when given; OidcError unless it answers 200 with JSON.
  virtual nlohmann::json get(const std::string& url, const std::string& bearer) = 0;
  // POST of a form with the client's id and secret (client_secret_basic): the status and the
  // JSON body (an error's body too); OidcError when nothing JSON came back.
  virtual std::pair<long, nlohmann::json> post_form(const std::string& url, const Form& form) = 0;
};
std::unique_ptr<ProviderHttp> curl_provider_http(const ProviderSettings& settings);

struct Tokens {
  std::string id_token;
  std::string access_token;
};

struct DeviceStart {
  std::string device_code;
  std::string user_code;
  std::string verification_uri;
  std::string verification_uri_complete;  // may be empty
  int interval = 5;                       // seconds between polls
  int expires_in = 600;
};

// A JWT's payload, without any check of its signature; OidcError when it is no JWT.
nlohmann::json jwt_claims(const std::string& jwt);
// The ID token's claims for this client now: iss is the issuer, aud names the client (and azp
// does when there are several audiences), exp is ahead, and nonce is `nonce` when that is not
// empty. OidcError naming the claim otherwise.
void check_id_token(const nlohmann::json& claims, const ProviderSettings& settings,
                    std::int64_t now_seconds, const std::string& nonce);
// A PKCE verifier and its S256 challenge; random text for states and nonces.
std::pair<std::string, std::string> pkce_pair();
std::string random_text();

class OidcClient {
 public:
  OidcClient(ProviderSettings settings, std::unique_ptr<ProviderHttp> http);
  const ProviderSettings& settings() const { return settings_; }

  std::string authorization_url(const std::string& redirect_uri, const std::string& state,
                                const std::string& nonce, const std::string& code_challenge);
  Tokens exchange_code(const std::string& code, const std::string& redirect_uri,
                       const std::string& verifier);
  DeviceStart start_device();
  // nullopt while the person has not answered; `slow_down` when the provider asks for a longer
  // interval. OidcError when they refused or the code expired.
  std::optional<Tokens> poll_device(const std::string& device_code, bool& slow_down);
  // Who logged in: the ID token's checked claims with userinfo's added (same subject).
  nlohmann::json identity(const Tokens& tokens, std::int64_t now_seconds, const std::string& nonce);

 private:
  struct Endpoints {
    std::string authorization, token, userinfo, device_authorization;
  };
  Endpoints endpoints();  // discovery, kept once it worked
  Tokens tokens_from(long status, const nlohmann::json& body);

  ProviderSettings settings_;
  std::unique_ptr<ProviderHttp> http_;
  std::mutex mutex_;
  std::optional<Endpoints> endpoints_;
};

}  // namespace bowline::sso
