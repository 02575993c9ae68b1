// The CLI's side of the HTTP API (docs/api.md): where the server is, the token, requests over
// libcurl with errors mapped to the CLI's exit codes, and the event stream (SSE) for --wait.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace bowline::cli {

using ojson = nlohmann::ordered_json;

inline constexpr const char* kDefaultServer = "http://127.0.0.1:7470";

// A failure that ends the verb with `exit_code` (app.hpp) and `what()` on stderr.
class CliError : public std::runtime_error {
 public:
  CliError(int exit_code, const std::string& message)
      : std::runtime_error(message), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// The server answered with an error status. `body` is its JSON ({"error": ...}, and for
// templates `diagnostics`), or null when the body was not JSON.
class ApiError : public CliError {
 public:
  ApiError(int exit_code, const std::string& message, long status, ojson body)
      : CliError(exit_code, message), status_(status), body_(std::move(body)) {}
  long status() const { return status_; }
  const ojson& body() const { return body_; }

 private:
  long status_;
  ojson body_;
};

// The exit code for an HTTP status: 2xx ok, 401/403/404 not found, other errors invalid.
int exit_code_for_status(long status);

// ---- where and who ------------------------------------------------------------------------

struct Endpoint {
  std::string server;        // base URL without a trailing slash, e.g. http://127.0.0.1:7470
  std::string server_from;   // "--server", "BOWLINE_SERVER", the login file's path, "default"
  std::string token;         // empty: none
  std::string token_from;    // "BOWLINE_TOKEN", the login file's path, or empty
  std::string login_file;    // where `bowline login` writes
  std::string login_server;  // the server the login file is for (empty: no login file)
  // An https:// server's pinned certificate fingerprint (tls_trust.hpp): only a certificate
  // with it is accepted. Empty: the system's trust store decides.
  std::string fingerprint;
  std::string fingerprint_from;  // the login file's path, "--accept-fingerprint", ...
  // Sent as X-Bowline-Agent ("mcp/TOOL"): the server records such calls in its audit log.
  std::string agent;
};

// The login file: the server and token of the last `bowline login`, and the certificate
// fingerprints pinned for https:// servers (by their URL), kept across logins to others.
struct LoginFile {
  std::string server, token;
  std::map<std::string, std::string> fingerprints;
};

// The login file at `path`; nullopt when there is none, CliError(kExitUsage) when it is not one.
std::optional<LoginFile> read_login_file(const std::string& path);

// ~/.config/bowline/login.json; HOME unset: the user's home from the password database
// (/root for root).
std::string login_file_path();

// "host:port" -> "http://host:port"; trailing slashes dropped.
std::string normalize_server(std::string url);

// Server: --server, else BOWLINE_SERVER, else the login file, else kDefaultServer. Token:
// BOWLINE_TOKEN, else the login file's token when the login file is for that same server (a
// token is never sent to a server it was not issued by). Fingerprint: the one the login file
// pins for that server.
Endpoint resolve_endpoint(const std::string& flag_server);

// Writes {"server", "token", "fingerprints"} to the login file (0600, its directory 0700),
// atomically.
void write_login_file(const std::string& path, const LoginFile& file);

// ---- requests -----------------------------------------------------------------------------

class Client {
 public:
  explicit Client(Endpoint endpoint);
  const Endpoint& endpoint() const { return endpoint_; }
  // How long a whole request may take (default 2 minutes); shell completion asks for less.
  void set_timeout(std::chrono::seconds timeout) { timeout_ = timeout; }

  // Sends a request to `path` (below the server's base URL, e.g. "/api/v1/spaces") and returns
  // the answer's JSON (null for an empty body). Throws CliError(kExitUnreachable) when the
  // server cannot be reached, CertificateError (tls_trust.hpp) when its certificate is not
  // trusted, ApiError for an error status.
  ojson call(const std::string& method, const std::string& path, const ojson* body = nullptr,
             long* status = nullptr);
  ojson get(const std::string& path) { return call("GET", path); }
  // GET of an answer that is not JSON (an archive): its bytes; errors as call().
  std::string get_bytes(const std::string& path);
  ojson post(const std::string& path, const ojson& body) { return call("POST", path, &body); }
  ojson put(const std::string& path, const ojson& body) { return call("PUT", path, &body); }
  ojson patch(const std::string& path, const ojson& body) { return call("PATCH", path, &body); }
  ojson del(const std::string& path, const ojson* body = nullptr) {
    return call("DELETE", path, body);
  }

 private:
  // The request's answer as sent and its status; CliError when the server cannot be reached.
  std::string perform(const std::string& method, const std::string& path, const ojson* body,
                      long& status);

  Endpoint endpoint_;
  std::chrono::seconds timeout_{120};
};

// A path segment with everything but unreserved characters percent-encoded.
std::string escape_segment(std::string_view segment);

// ---- the event stream -----------------------------------------------------------------------

struct SseEvent {
  std::string id;
  std::string event;  // "message" when the stream named none
  std::string data;   // data lines joined with '\n'
};

// text/event-stream framing (WHATWG HTML, server-sent events): `field: value` lines, an empty
// line ends an event, lines starting with ':' are comments, \n, \r\n or \r end lines.
class SseParser {
 public:
  std::vector<SseEvent> feed(std::string_view chunk);

 private:
  void line(std::string_view text, std::vector<SseEvent>& out);
  std::string pending_;  // an unfinished line
  bool last_was_cr_ = false;
  SseEvent current_;
  bool has_data_ = false;
};

// GET /api/v1/events[?since=SEQ] followed without blocking: poll() runs the transfer for a
// while and hands over the events that arrived.
class EventStream {
 public:
  enum class Status { Connecting, Open, Closed, Failed };
  EventStream(const Endpoint& endpoint, std::optional<std::int64_t> since);
  ~EventStream();
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  // Waits at most `timeout` for events; returns as soon as some have arrived or the stream
  // ended.
  std::vector<SseEvent> poll(std::chrono::milliseconds timeout);
  Status status() const;
  long http_status() const;
  std::string error() const;  // why it failed or closed

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace bowline::cli
