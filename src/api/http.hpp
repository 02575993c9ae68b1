// HTTP as the routes see it: plain request and response values, with no Boost in sight. The
// server (http_server.cpp) turns the wire into a Request and a Response back into the wire.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bowline::api {

struct Request {
  std::string method;                          // "GET", "POST", ...
  std::string target;                          // as sent: path and query
  std::string path;                            // percent-decoded, without the query
  std::map<std::string, std::string> query;    // decoded; a repeated key keeps the last value
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  std::map<std::string, std::string> params;  // path parameters, filled by the Router
  std::string remote;                         // the peer's address
  bool tls = false;                           // it came over bowline's own HTTPS
  // Only its header was read (a host the server relays: HttpServerOptions::header_only); the
  // body, if any, is still on the wire.
  bool header_only = false;

  // The header's value, or "" when absent (`name` in any case).
  std::string header(std::string_view name) const;
  const std::string& param(const std::string& name) const;
  // The body as JSON; HttpError 400 when it is not JSON (an empty body is an empty object).
  nlohmann::json json() const;
};

// A body written while the connection stays open (server-sent events). The server calls
// open() once the headers are out, with a sink that queues text for the client; close() when
// the client went away or the server stops (always after open() has returned).
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  // Queues text without blocking; false once the stream has closed.
  virtual bool send(std::string text) = 0;
  virtual bool closed() const = 0;
  // Bytes queued and not yet written to the client (for backpressure while replaying).
  virtual std::size_t pending() const = 0;
  // Ends the stream now, from any thread (the credential that opened it is no longer good);
  // the client sees the body end. close() of the Stream follows.
  virtual void end() {}
};

struct Stream {
  std::function<void(std::shared_ptr<StreamSink>)> open;
  std::function<void()> close;
  // Sent whenever nothing else was for this long, so proxies and clients see a live stream.
  std::string heartbeat = ": heartbeat\n\n";
  std::shared_ptr<void> hold;  // kept as long as the stream (a user's slot)
};

// One side of a WebSocket the server accepted (binary frames both ways). Safe from any thread.
class SocketPeer {
 public:
  virtual ~SocketPeer() = default;
  // Queues one binary frame without blocking; false once the socket has closed.
  virtual bool send(std::string bytes) = 0;
  // Closes the socket (a normal close frame); the Upgrade's close() follows.
  virtual void close() = 0;
  virtual bool closed() const = 0;
  // Bytes queued and not yet written (for backpressure).
  virtual std::size_t pending() const = 0;
  // Stops (true) or resumes (false) reading frames from the client: the backpressure of a
  // consumer that cannot keep up (at most one more frame arrives after a pause).
  virtual void pause_reading(bool paused) { (void)paused; }
};

// A route's answer that turns the connection into a WebSocket. The route has done every check
// (refusals are ordinary responses); the server does the handshake, then calls open() on a
// worker thread, then message() for each frame from the client, in order, on an I/O thread
// (it must not block), and close() once when the socket is gone (always after open()
// returned). A request that is not a WebSocket handshake gets 426 instead.
struct Upgrade {
  std::function<void(std::shared_ptr<SocketPeer>)> open;
  std::function<void(std::string bytes)> message;
  std::function<void()> close;
  std::shared_ptr<void> hold;  // kept as long as the socket (a user's slot)
};

// A request's header fields in order, names as sent (a relay's rewrite edits them).
using HeaderFields = std::vector<std::pair<std::string, std::string>>;

// What ends a relay from outside (the route's watch): closes both of its sockets.
class RelayEnd {
 public:
  virtual ~RelayEnd() = default;
  virtual void close() = 0;
};

// A route's answer to a header-only request that hands the rest of the connection to a
// guest's HTTP server (a preview URL). The server writes the request to `fd`, its fields
// passed through `rewrite` and its body after it, then relays: what `fd` answers reaches the
// client byte for byte, as it comes (streams, server-sent events); each further request on
// the connection is rewritten the same way; after a request that asks for an Upgrade (a
// WebSocket) both directions are bytes. `open` runs on a worker once relaying starts, with the
// handle that ends it; `close` once when it is over (always after open() returned).
struct Relay {
  int fd = -1;  // owned from here on: a connected stream socket
  std::function<void(HeaderFields&)> rewrite;
  std::function<void(std::shared_ptr<RelayEnd>)> open;
  std::function<void()> close;
  std::shared_ptr<void> hold;  // kept as long as the relay (a user's slot)
};

struct Response;

// A route's answer that must wait on something outside the server first (a TCP connect to a
// guest, an SSH login, a resume): the handler returns at once and `run` goes on a thread of
// its own, never an HTTP worker's, so a slow guest or a slow client holds no worker. What
// `run` returns is answered as if the handler had returned it (a deferred answer is not
// deferred again). It must not throw.
struct Deferred {
  std::function<Response()> run;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Set: sent instead of `body`, without a copy (a cached answer shared by many responses).
  std::shared_ptr<const std::string> shared_body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::shared_ptr<Stream> stream;    // set: an endless body (status and headers are sent first)
  std::shared_ptr<Upgrade> upgrade;  // set: a WebSocket (status and body are not used)
  std::shared_ptr<Deferred> later;   // set: the answer comes from later->run()
  std::shared_ptr<Relay> relay;      // set: the connection goes to a guest (status, body unused)
  // The request carried a valid credential: its connection is no stranger any more, and is
  // not shed to make room for others (connection_ledger.hpp).
  bool authenticated = false;

  static Response json(int status, const nlohmann::json& value);
  static Response error(int status, const std::string& message);
  static Response no_content();
  // An answer worked out by `run` off the HTTP workers (Deferred).
  static Response deferred(std::function<Response()> run);
};

// Thrown by routes for an answer other than success; the API turns it into a Response.
class HttpError : public std::runtime_error {
 public:
  HttpError(int status, const std::string& message, nlohmann::json extra = nullptr)
      : std::runtime_error(message), status_(status), extra_(std::move(extra)) {}
  int status() const { return status_; }
  // Members merged into the error object ({"error": ..., "diagnostics": [...]}).
  const nlohmann::json& extra() const { return extra_; }

 private:
  int status_;
  nlohmann::json extra_;
};

// Every byte but letters, digits and -._~ as %XX: a path segment or a query value.
std::string percent_encode(std::string_view text);
// "%2F" -> "/"; with `plus_is_space`, "+" -> " " (query strings). HttpError 400 on a bad escape.
std::string percent_decode(std::string_view text, bool plus_is_space);
// Splits a target into its decoded path and query parameters.
void parse_target(std::string_view target, std::string& path,
                  std::map<std::string, std::string>& query);
const char* reason_phrase(int status);

}  // namespace bowline::api
