// What the server makes of a request's bytes before a handler sees them: Beast's parser with
// the server's limits, and the refusals it leads to. Only Beast's HTTP part (no Asio sockets).
#include "api/http_server_wire.hpp"
#include "util/strings.hpp"

namespace bowline::api {

namespace detail {

// Every request's parser, on the wire and in parse_request_bytes alike.
void configure(Parser& parser, const HttpServerOptions& options) {
  parser.body_limit(options.body_limit);
  parser.header_limit(kHeaderLimit);
}

// The answer to a request whose Content-Length is over the limit, before its body is read.
std::optional<ParsedRequest> refuse_length(const Parser& parser, const HttpServerOptions& options) {
  const auto length = parser.content_length();
  if (!length || *length <= options.body_limit) return std::nullopt;
  return ParsedRequest{
      413,
      "the request body is larger than " + std::to_string(options.body_limit) + " bytes",
      false,
      {}};
}

// The answer to a read that failed; nullopt when the connection just ends (end of stream,
// timeout, reset): there is nobody to answer.
std::optional<ParsedRequest> refuse_read(error_code ec, const HttpServerOptions& options) {
  if (ec == http::error::body_limit)
    return ParsedRequest{
        413,
        "the request body is larger than " + std::to_string(options.body_limit) + " bytes",
        false,
        {}};
  if (ec == http::error::header_limit)
    return ParsedRequest{431, "the request headers are too large", false, {}};
  if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message)
    return ParsedRequest{400, "malformed HTTP request: " + ec.message(), false, {}};
  return std::nullopt;
}

// The request as the routes see it (its target is parsed on the worker: parse_target).
Request to_request(Message& message, const std::string& remote, bool tls) {
  Request request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  request.remote = remote;
  request.tls = tls;
  for (const auto& field : message)
    request.headers[util::to_lower(std::string(field.name_string()))] = std::string(field.value());
  request.body = std::move(message.body());
  return request;
}

std::string host_of(const Message& message) {
  auto host = util::to_lower(std::string(message[http::field::host]));
  if (!host.empty() && host.front() == '[') {  // [v6]:port
    const auto end = host.find(']');
    return end == std::string::npos ? host : host.substr(0, end + 1);
  }
  if (const auto colon = host.find(':'); colon != std::string::npos) host.resize(colon);
  return host;
}

}  // namespace detail

using namespace detail;

ParsedRequest parse_request_bytes(std::string_view bytes, const HttpServerOptions& options) {
  Parser parser;
  configure(parser, options);
  asio::const_buffer rest(bytes.data(), bytes.size());
  bool header_checked = false;
  const ParsedRequest wait{0, {}, true, {}};  // the server would read on
  while (!parser.is_done()) {
    error_code ec;
    const auto used = parser.put(rest, ec);
    rest += used;
    if (ec == http::error::need_more) return wait;
    if (ec) {
      if (auto refused = refuse_read(ec, options)) return *refused;
      return wait;
    }
    if (parser.is_header_done() && !header_checked) {
      header_checked = true;
      if (auto refused = refuse_length(parser, options)) return *refused;
    }
    if (used == 0 && !parser.is_done()) return wait;  // no progress: more bytes are needed
  }
  auto message = parser.release();
  ParsedRequest out{0, {}, false, to_request(message, "192.0.2.1:1", false)};
  try {
    parse_target(out.request.target, out.request.path, out.request.query);
  } catch (const HttpError& e) {
    return ParsedRequest{e.status(), e.what(), false, {}};
  }
  return out;
}

}  // namespace bowline::api
