// KubeClient over libcurl: HTTPS to the kubeconfig's server with its CA, token or client
// certificate. One easy handle per request; nothing is kept between requests.
#pragma once

#include <curl/curl.h>

#include <chrono>

#include "kubevirt/kube_client.hpp"
#include "kubevirt/kubeconfig.hpp"

namespace bowline::kubevirt {

// The kubeconfig's trust (CA, or none) and identity (client certificate) on a handle; a token
// is a header, which each request sets itself.
void set_trust_and_identity(CURL* handle, const Connection& connection);

class CurlKubeClient : public KubeClient {
 public:
  explicit CurlKubeClient(Connection connection,
                          std::chrono::seconds timeout = std::chrono::seconds(60));
  HttpResponse send(const std::string& method, const std::string& target,
                    const std::string& content_type, const std::string& body) override;
  int open_stream(const std::string& target, const std::string& subprotocol) override;

 private:
  Connection c_;
  std::chrono::seconds timeout_;
};

}  // namespace bowline::kubevirt
