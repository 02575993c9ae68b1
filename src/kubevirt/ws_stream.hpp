// A WebSocket to the Kubernetes API server (KubeVirt's portforward subresource), handed to the
// caller as a plain connected socket. Why bowline frames WebSocket itself here: Debian 12's
// libcurl has no WebSocket support, but it makes the TLS connection with the kubeconfig's CA and
// client certificate exactly as every other Kubernetes call does (CONNECT_ONLY), and a client's
// framing (RFC 6455: masked frames out, ping answered, close) is a few dozen lines.
#pragma once

#include <chrono>
#include <string>

#include "kubevirt/kubeconfig.hpp"

namespace bowline::kubevirt {

// Connects, sends the upgrade for `target` with `subprotocol` (e.g. plain.kubevirt.io) and the
// kubeconfig's token, and checks the server's 101. Returns one end of a socket pair; a thread
// carries its bytes to and from the WebSocket until either side ends. The stream has no
// half-close: the caller's end of writing ends the WebSocket (KubeVirt's plain protocol has no
// way to say it). Throws TransportError (with the server's status and message on a refusal).
int open_websocket_stream(const Connection& connection, const std::string& target,
                          const std::string& subprotocol, std::chrono::seconds timeout);

}  // namespace bowline::kubevirt
