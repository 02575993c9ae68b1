#include "cli/client.hpp"

#include <curl/curl.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "api/http.hpp"
#include "cli/app.hpp"
#include "cli/tls_trust.hpp"
#include "util/curl.hpp"
#include "util/tls_fingerprint.hpp"

namespace bowline::cli {

namespace fs = std::filesystem;

int exit_code_for_status(long status) {
  if (status >= 200 && status < 300) return kExitOk;
  if (status == 401 || status == 403 || status == 404) return kExitNotFound;
  return kExitInvalid;
}

// ---- where and who ------------------------------------------------------------------------

std::string login_file_path() {
  std::string home;
  if (const char* env = std::getenv("HOME"); env && *env) {
    home = env;
  } else if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir && *pw->pw_dir) {
    home = pw->pw_dir;
  } else {
    home = getuid() == 0 ? "/root" : ".";
  }
  return home + "/.config/bowline/login.json";
}

std::string normalize_server(std::string url) {
  while (!url.empty() && (url.back() == '/' || url.back() == ' ')) url.pop_back();
  while (!url.empty() && url.front() == ' ') url.erase(0, 1);
  if (!url.empty() && url.find("://") == std::string::npos) url = "http://" + url;
  return url;
}

std::optional<LoginFile> read_login_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  LoginFile file;
  try {
    const auto j = nlohmann::json::parse(in);
    if (j.contains("server") && j["server"].is_string())
      file.server = normalize_server(j["server"].get<std::string>());
    if (j.contains("token") && j["token"].is_string()) file.token = j["token"].get<std::string>();
    if (j.contains("fingerprints"))
      for (const auto& [server, pin] : j.at("fingerprints").items())
        file.fingerprints[normalize_server(server)] = pin.get<std::string>();
  } catch (const std::exception& e) {
    throw CliError(kExitUsage, path + ": not a login file (" + e.what() +
                                   "); log in again with bowline login --server URL --token TOKEN");
  }
  for (const auto& [server, pin] : file.fingerprints)
    if (!util::is_certificate_fingerprint(pin))
      throw CliError(kExitUsage, path + ": the fingerprint pinned for " + server + " (\"" + pin +
                                     "\") is not SHA256: and 43 base64 characters; log in to it "
                                     "again with bowline login --server " +
                                     server + " --accept-fingerprint SHA256:...");
  return file;
}

namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

Endpoint resolve_endpoint(const std::string& flag_server) {
  Endpoint e;
  e.login_file = login_file_path();
  const auto login = read_login_file(e.login_file);
  if (login) e.login_server = login->server;
  if (!flag_server.empty()) {
    e.server = normalize_server(flag_server);
    e.server_from = "--server";
  } else if (const auto server = env("BOWLINE_SERVER"); !server.empty()) {
    e.server = normalize_server(server);
    e.server_from = "BOWLINE_SERVER";
  } else if (login && !login->server.empty()) {
    e.server = login->server;
    e.server_from = e.login_file;
  } else {
    e.server = kDefaultServer;
    e.server_from = "default";
  }
  if (const auto token = env("BOWLINE_TOKEN"); !token.empty()) {
    e.token = token;
    e.token_from = "BOWLINE_TOKEN";
  } else if (login && !login->token.empty() && login->server == e.server) {
    e.token = login->token;
    e.token_from = e.login_file;
  }
  if (login)
    if (const auto pin = login->fingerprints.find(e.server); pin != login->fingerprints.end()) {
      e.fingerprint = pin->second;
      e.fingerprint_from = e.login_file;
    }
  return e;
}

void write_login_file(const std::string& path, const LoginFile& file) {
  const auto dir = fs::path(path).parent_path();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw CliError(kExitInvalid, "cannot make " + dir.string() + ": " + ec.message());
  ::chmod(dir.c_str(), 0700);
  const auto temp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw CliError(kExitInvalid, "cannot write " + temp + ": " + std::strerror(errno));
  nlohmann::ordered_json j{{"server", file.server}, {"token", file.token}};
  if (!file.fingerprints.empty()) j["fingerprints"] = file.fingerprints;
  const auto text = j.dump(2) + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const auto reason = std::strerror(errno);
      ::close(fd);
      ::unlink(temp.c_str());
      throw CliError(kExitInvalid, "cannot write " + temp + ": " + reason);
    }
    done += static_cast<std::size_t>(n);
  }
  ::fchmod(fd, 0600);
  if (::fsync(fd) != 0 || ::close(fd) != 0 || ::rename(temp.c_str(), path.c_str()) != 0) {
    const auto reason = std::strerror(errno);
    ::unlink(temp.c_str());
    throw CliError(kExitInvalid, "cannot write " + path + ": " + reason);
  }
}

// ---- requests -----------------------------------------------------------------------------

namespace {

using Easy = util::CurlEasy;
using Headers = util::CurlList;

Easy easy_handle() {
  try {
    return util::curl_easy();
  } catch (const std::runtime_error& e) {
    throw CliError(kExitInvalid, e.what());
  }
}

Headers make_headers(const Endpoint& endpoint, const char* accept, bool json_body) {
  curl_slist* raw = nullptr;
  raw = curl_slist_append(raw, (std::string("Accept: ") + accept).c_str());
  if (json_body) raw = curl_slist_append(raw, "Content-Type: application/json");
  if (!endpoint.token.empty())
    raw = curl_slist_append(raw, ("Authorization: Bearer " + endpoint.token).c_str());
  if (!endpoint.agent.empty())
    raw = curl_slist_append(raw, ("X-Bowline-Agent: " + endpoint.agent).c_str());
  raw = curl_slist_append(raw, "Expect:");
  return Headers(raw);
}

CURLcode hold_to_trust(CURL*, void* ssl_ctx, void* trust) {
  hold_to(static_cast<SSL_CTX*>(ssl_ctx), *static_cast<TlsTrust*>(trust));
  return CURLE_OK;
}

// HTTPS: the handshake is held to `trust` (tls_trust.hpp), which must outlive the transfer.
void trust_options(CURL* h, const std::string& url, TlsTrust& trust) {
  if (!is_https(url)) return;
  if (curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, &hold_to_trust) != CURLE_OK)
    throw CliError(kExitInvalid,
                   "this libcurl cannot check server certificates as bowline does "
                   "(it needs libcurl built with OpenSSL)");
  curl_easy_setopt(h, CURLOPT_SSL_CTX_DATA, &trust);
  curl_easy_setopt(h, CURLOPT_SSL_SESSIONID_CACHE, 0L);  // every handshake is checked
  // A pinned certificate is the server's whatever names it holds.
  if (!trust.pinned.empty()) curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
}

void common_options(CURL* h, const std::string& url, curl_slist* headers, char* error_buffer,
                    TlsTrust& trust) {
  trust_options(h, url, trust);
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https,http");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "bowline-cli/" BOWLINE_VERSION);
}

std::string unreachable_message(const Endpoint& e, CURLcode code, const char* error_buffer) {
  std::string reason = error_buffer && *error_buffer ? error_buffer : curl_easy_strerror(code);
  std::string message = "cannot reach the bowline server at " + e.server + ": " + reason;
  if (e.server_from == "default")
    message +=
        " (is `bowline server` running? Name another with --server URL, BOWLINE_SERVER "
        "or bowline login)";
  else
    message += " (the address came from " + e.server_from + ")";
  return message;
}

std::string error_message(const Endpoint& e, long status, const ojson& body,
                          const std::string& raw) {
  std::string message;
  if (body.is_object() && body.contains("error") && body["error"].is_string())
    message = body["error"].get<std::string>();
  else if (!raw.empty() && raw.size() < 300)
    message = raw;
  else
    message = "the server answered HTTP " + std::to_string(status);
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r')) message.pop_back();
  if (status == 401) {
    if (e.token.empty()) {
      message += " (no token for " + e.server + ": log in with bowline login --server " + e.server +
                 " --token TOKEN, or set BOWLINE_TOKEN";
      if (!e.login_server.empty() && e.login_server != e.server)
        message += "; the login file is for " + e.login_server;
      message += ")";
    } else {
      message += " (the token from " + e.token_from + " was refused)";
    }
  }
  return message;
}

}  // namespace

std::string escape_segment(std::string_view segment) {
  return api::percent_encode(segment);
}

Client::Client(Endpoint endpoint) : endpoint_(std::move(endpoint)) {}

std::string Client::perform(const std::string& method, const std::string& path, const ojson* body,
                            long& status) {
  Easy handle = easy_handle();
  CURL* h = handle.get();
  const auto headers = make_headers(endpoint_, "application/json", body != nullptr);
  char error_buffer[CURL_ERROR_SIZE] = {0};
  const std::string url = endpoint_.server + path;
  auto trust = trust_for(endpoint_);
  common_options(h, url, headers.get(), error_buffer, trust);
  curl_easy_setopt(h, CURLOPT_TIMEOUT, static_cast<long>(timeout_.count()));
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
  std::string text;
  if (body) {
    text = body->dump();
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, text.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(text.size()));
  }
  std::string answer;
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, util::curl_append);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &answer);
  const auto code = curl_easy_perform(h);
  if (code != CURLE_OK) {
    throw_if_untrusted(trust, endpoint_, code == CURLE_PEER_FAILED_VERIFICATION, error_buffer);
    throw CliError(kExitUnreachable, unreachable_message(endpoint_, code, error_buffer));
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  return answer;
}

namespace {

// An answer's JSON, and whether it was JSON at all.
ojson parsed_or_null(const std::string& answer, bool& is_json) {
  is_json = true;
  if (answer.empty()) return ojson();
  try {
    return ojson::parse(answer);
  } catch (const std::exception&) {
    is_json = false;
    return ojson();
  }
}

}  // namespace

std::string Client::get_bytes(const std::string& path) {
  long status = 0;
  auto answer = perform("GET", path, nullptr, status);
  if (status < 200 || status >= 300) {
    bool is_json = true;
    const auto parsed = parsed_or_null(answer, is_json);
    throw ApiError(exit_code_for_status(status), error_message(endpoint_, status, parsed, answer),
                   status, parsed);
  }
  return answer;
}

ojson Client::call(const std::string& method, const std::string& path, const ojson* body,
                   long* status_out) {
  long status = 0;
  const auto answer = perform(method, path, body, status);
  if (status_out) *status_out = status;
  const std::string url = endpoint_.server + path;

  bool is_json = true;
  const auto parsed = parsed_or_null(answer, is_json);
  if (status < 200 || status >= 300)
    throw ApiError(exit_code_for_status(status), error_message(endpoint_, status, parsed, answer),
                   status, parsed);
  if (!is_json)
    throw CliError(kExitInvalid,
                   method + " " + url + ": the answer is not JSON: " + answer.substr(0, 200));
  return parsed;
}

// ---- the event stream -----------------------------------------------------------------------

std::vector<SseEvent> SseParser::feed(std::string_view chunk) {
  std::vector<SseEvent> out;
  for (const char c : chunk) {
    if (c == '\n' && last_was_cr_) {  // the \n of a \r\n: the line already ended
      last_was_cr_ = false;
      continue;
    }
    last_was_cr_ = c == '\r';
    if (c == '\n' || c == '\r') {
      line(pending_, out);
      pending_.clear();
    } else {
      pending_ += c;
    }
  }
  return out;
}

void SseParser::line(std::string_view text, std::vector<SseEvent>& out) {
  if (text.empty()) {
    if (has_data_) {
      if (current_.event.empty()) current_.event = "message";
      out.push_back(current_);
    }
    current_.event.clear();
    current_.data.clear();
    has_data_ = false;  // the id carries over, as the last event id does
    return;
  }
  if (text.front() == ':') return;  // a comment, e.g. a keep-alive
  const auto colon = text.find(':');
  const auto field = text.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = text.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) current_.data += '\n';
    current_.data += value;
    has_data_ = true;
  } else if (field == "event") {
    current_.event = value;
  } else if (field == "id") {
    current_.id = value;
  }  // retry and unknown fields: ignored
}

struct EventStream::State {
  Endpoint endpoint;
  TlsTrust trust;
  CURLM* multi = nullptr;
  Easy easy;
  Headers headers;
  char error_buffer[CURL_ERROR_SIZE] = {0};
  SseParser parser;
  std::vector<SseEvent> ready;
  std::string error_body;  // the body of a non-200 answer
  long http_status = 0;
  Status status = Status::Connecting;
  std::string error;

  static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
    auto* s = static_cast<State*>(user);
    const std::string_view line(data, size * count);
    if (line.rfind("HTTP/", 0) == 0) {
      const auto space = line.find(' ');
      if (space != std::string_view::npos)
        s->http_status = std::strtol(std::string(line.substr(space + 1, 3)).c_str(), nullptr, 10);
    } else if ((line == "\r\n" || line == "\n") && s->http_status == 200) {
      s->status = Status::Open;
    }
    return size * count;
  }
  static std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
    auto* s = static_cast<State*>(user);
    const std::string_view chunk(data, size * count);
    if (s->http_status != 200) {
      if (s->error_body.size() < 4096) s->error_body.append(chunk);
    } else {
      s->status = Status::Open;
      for (auto& event : s->parser.feed(chunk)) s->ready.push_back(std::move(event));
    }
    return size * count;
  }
};

EventStream::EventStream(const Endpoint& endpoint, std::optional<std::int64_t> since)
    : state_(std::make_unique<State>()) {
  auto& s = *state_;
  s.endpoint = endpoint;
  s.easy = easy_handle();
  s.multi = curl_multi_init();
  if (!s.easy || !s.multi) throw CliError(kExitInvalid, "libcurl could not make a handle");
  std::string url = endpoint.server + "/api/v1/events";
  if (since) url += "?since=" + std::to_string(*since);
  s.headers = make_headers(endpoint, "text/event-stream", false);
  CURL* h = s.easy.get();
  s.trust = trust_for(endpoint);
  common_options(h, url, s.headers.get(), s.error_buffer, s.trust);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &State::on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &s);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &State::on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_multi_add_handle(s.multi, h);
}

EventStream::~EventStream() {
  if (state_->multi) {
    if (state_->easy) curl_multi_remove_handle(state_->multi, state_->easy.get());
    curl_multi_cleanup(state_->multi);
  }
}

std::vector<SseEvent> EventStream::poll(std::chrono::milliseconds timeout) {
  auto& s = *state_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (s.status == Status::Connecting || s.status == Status::Open) {
    int running = 0;
    curl_multi_perform(s.multi, &running);
    int left = 0;
    while (CURLMsg* message = curl_multi_info_read(s.multi, &left)) {
      if (message->msg != CURLMSG_DONE) continue;
      const auto code = message->data.result;
      if (code != CURLE_OK) {
        s.status = Status::Failed;
        try {
          throw_if_untrusted(s.trust, s.endpoint, code == CURLE_PEER_FAILED_VERIFICATION,
                             s.error_buffer);
          s.error = unreachable_message(s.endpoint, code, s.error_buffer);
        } catch (const CertificateError& e) {
          s.error = e.what();
        }
      } else if (s.http_status != 200) {
        s.status = Status::Failed;
        ojson body;
        try {
          body = ojson::parse(s.error_body);
        } catch (const std::exception&) {
        }
        s.error = error_message(s.endpoint, s.http_status, body, s.error_body);
      } else {
        s.status = Status::Closed;
        s.error = "the server closed the event stream";
      }
    }
    if (!s.ready.empty() || s.status == Status::Closed || s.status == Status::Failed) break;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) break;
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    curl_multi_poll(s.multi, nullptr, 0, static_cast<int>(std::min<long long>(wait, 1000)),
                    nullptr);
  }
  std::vector<SseEvent> out;
  out.swap(s.ready);
  return out;
}

EventStream::Status EventStream::status() const {
  return state_->status;
}
long EventStream::http_status() const {
  return state_->http_status;
}
std::string EventStream::error() const {
  return state_->error;
}

}  // namespace bowline::cli
