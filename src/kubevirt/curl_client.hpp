// KubeClient over libcurl: HTTPS to the kubeconfig's server with its CA, token or client
// certificate. One easy handle per request; nothing is kept between requests.
#pragma once

#include <chrono>

#include "kubevirt/kube_client.hpp"
#include "kubevirt/kubeconfig.hpp"

namespace bowline::kubevirt {

class CurlKubeClient : public KubeClient {
 public:
  explicit CurlKubeClient(Connection connection,
                          std::chrono::seconds timeout = std::chrono::seconds(60));
  HttpResponse send(const std::string& method, const std::string& target,
                    const std::string& content_type, const std::string& body) override;

 private:
  Connection c_;
  std::chrono::seconds timeout_;
};

}  // namespace bowline::kubevirt
