// The HTTP/1.1 server: keep-alive connections on a few I/O threads, handlers on a small pool
// of worker threads (a slow handler never stalls other connections), answers that wait on
// upstream I/O on threads of their own (Response::later), a request body limit, endless
// bodies for server-sent events, and connections counted per client address, strangers shed
// first (connection_ledger.hpp); plain HTTP or HTTPS (with WSS) through the same code. Only
// http_server.cpp, http_websocket.cpp, http_relay.cpp, http_tls.cpp and http_parse.cpp see
// Boost.Beast.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/http.hpp"

namespace bowline::api {

// The PEM files of an HTTPS server: its certificate (with any intermediates after it) and key.
struct TlsFiles {
  std::string certificate_chain;
  std::string private_key;
};

// A certificate for the host names that end in `suffix` (".preview.example.com": a
// wildcard's), chosen by the name the client asks for (SNI).
struct HostTls {
  std::string suffix;
  TlsFiles files;
};

struct HttpServerOptions {
  std::string address = "127.0.0.1";
  unsigned short port = 7470;  // 0: any free port (port() says which)
  unsigned io_threads = 2;
  unsigned workers = 8;                                              // threads that run handlers
  std::size_t body_limit = 1024 * 1024;                              // larger requests get 413
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(60)};  // bodies, WebSockets
  // From a connection's (or the last request's) end to a complete request header: a client
  // that trickles a header (slowloris) or idles between requests holds a socket no longer.
  std::chrono::milliseconds header_timeout{std::chrono::seconds(10)};
  // Open connections (WebSockets and event streams included), at most; fewer when the
  // open-files limit is lower (connection_limits). Beyond it the oldest connection that has
  // not authenticated is shed for a new one; with none, the new one is closed at once.
  std::size_t max_connections = 8192;
  // From one client address (IPv6: its /64): connections in all, and strangers among them
  // (connections that have sent no request with a valid credential yet; beyond this the
  // address's oldest stranger is shed).
  std::size_t max_connections_per_address = 1024;
  std::size_t max_strangers_per_address = 64;
  std::chrono::milliseconds heartbeat{std::chrono::seconds(15)};  // on event streams
  std::size_t stream_backlog = 8 * 1024 * 1024;  // unsent bytes before a slow stream is dropped
  // Set: HTTPS and WSS only (TLS 1.2 or later), answers carry Strict-Transport-Security and
  // requests say Request::tls; plain HTTP on the port gets a 400 and the connection ends.
  std::optional<TlsFiles> tls;
  std::vector<HostTls> host_tls;  // with `tls`: other certificates, by name
  // Requests whose Host (lower case, without the port) it accepts reach the handler after
  // their header (Request::header_only), whatever their body's size, and may be relayed
  // (Response::relay). Any other answer to one with a body ends its connection.
  std::function<bool(std::string_view host)> header_only;
};

class HttpServer {
 public:
  using Handler = std::function<Response(Request&)>;

  HttpServer(HttpServerOptions options, Handler handler);
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Loads the TLS files (if any), binds, listens and starts the threads. Throws
  // std::runtime_error when a TLS file cannot be loaded or the address cannot be bound.
  void start();
  // Closes the listener and every connection (event streams get their close()), waits for
  // the handlers and deferred answers that are running (those end by their own timeouts),
  // joins the threads. Idempotent.
  void stop();

  unsigned short port() const;
  std::size_t open_connections() const;
  std::size_t open_streams() const;

  struct Impl;  // public only so that http_server.cpp's sessions can name it

 private:
  std::unique_ptr<Impl> impl_;
};

// A request's header may be this large at most (431 beyond).
inline constexpr std::size_t kHeaderLimit = 16 * 1024;

// What the server makes of a request's bytes before a handler sees them: a Request (its
// target parsed), or the answer it gives instead (400 malformed, 413 body too large, 431
// header too large), or that it would wait for more. The same parser, limits and conversion
// as on the wire, without a socket: for the tests and the fuzzer (tests/fuzz/http_request_fuzz).
struct ParsedRequest {
  int status = 0;           // 0: `request` holds the request; else the answer's status
  std::string error;        // the answer's message
  bool incomplete = false;  // the bytes end before the request does
  Request request;          // remote 192.0.2.1:1, plain HTTP
};
ParsedRequest parse_request_bytes(std::string_view bytes, const HttpServerOptions& options = {});

// Splits "HOST:PORT" or "[V6]:PORT"; std::invalid_argument with a readable message otherwise.
std::pair<std::string, unsigned short> split_listen_address(const std::string& listen);

}  // namespace bowline::api
