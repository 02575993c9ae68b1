// The Kubernetes API as one call: a request on a path, a status and a body back. The apply
// and delete logic (apply.hpp) talks only to this seam; CurlKubeClient (curl_client.hpp) is
// the real one, tests use doubles.
#pragma once

#include <stdexcept>
#include <string>
#include "util/upstream_error.hpp"

namespace bowline::kubevirt {

struct HttpResponse {
  long status = 0;
  std::string body;
};

// The request never reached the server or never came back (connection, TLS, timeout).
class TransportError : public util::UpstreamError {
 public:
  explicit TransportError(const std::string& message)
      : util::UpstreamError("kubernetes", message) {}
};

class KubeClient {
 public:
  virtual ~KubeClient() = default;
  // `target` is the path with its query, e.g. /api/v1/namespaces/ns/secrets/x?fieldManager=y.
  // An empty body sends none. Throws TransportError.
  virtual HttpResponse send(const std::string& method, const std::string& target,
                            const std::string& content_type, const std::string& body) = 0;
  // A streaming subresource (KubeVirt's portforward) as a WebSocket with `subprotocol`, handed
  // over as a connected socket for the caller to own and close: what is written to it goes to
  // the server in binary frames, what the server sends can be read from it. Throws
  // TransportError when the server cannot be reached or refuses the upgrade.
  virtual int open_stream(const std::string& target, const std::string& subprotocol) {
    (void)subprotocol;
    throw TransportError("this Kubernetes client cannot open " + target + " as a stream");
  }
};

}  // namespace bowline::kubevirt
