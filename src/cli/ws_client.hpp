// The CLI's WebSocket client (console, VNC, tunnels): binary frames to and from one route of
// the server, authenticated with the API token, over ws:// or wss:// (the certificate held to
// the same rule as HTTP's, tls_trust.hpp). Beast lives only in ws_client.cpp.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cli/client.hpp"

namespace bowline::cli {

class WsConnection {
 public:
  // Connects and does the handshake for `path` (e.g. /api/v1/spaces/ID/console). Throws
  // CliError(kExitUnreachable) when the server cannot be reached, CertificateError when its
  // certificate is not trusted, and ApiError with the server's status and message when it
  // refuses the upgrade (401, 403, 404, 409, ...).
  WsConnection(const Endpoint& endpoint, const std::string& path);
  ~WsConnection();  // close()
  WsConnection(const WsConnection&) = delete;
  WsConnection& operator=(const WsConnection&) = delete;

  // The next message from the server; nullopt once the connection has closed. One reader.
  std::optional<std::string> read();
  // Gives a message read() returned back, for its memory to hold a later one: a bulk transfer
  // (an export) otherwise faults in fresh pages for every frame, which on a nested host cost
  // a sixth of the CLI's time. Optional.
  void recycle(std::string&& spent);
  // Queues a binary frame (never blocks for long); false once the connection has closed.
  bool write(std::string bytes);
  // Bytes queued by write() and not yet sent (a writer waits while it is high).
  std::size_t pending() const;
  // A normal close; a read() in progress returns nullopt. Idempotent, any thread.
  void close();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace bowline::cli
