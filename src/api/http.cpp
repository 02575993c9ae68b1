#include "api/http.hpp"

#include <cctype>

#include "util/strings.hpp"

namespace bowline::api {

std::string Request::header(std::string_view name) const {
  const auto it = headers.find(util::to_lower(name));
  return it == headers.end() ? std::string() : it->second;
}

const std::string& Request::param(const std::string& name) const {
  static const std::string kEmpty;
  const auto it = params.find(name);
  return it == params.end() ? kEmpty : it->second;
}

nlohmann::json Request::json() const {
  if (util::trim(body).empty()) return nlohmann::json::object();
  try {
    return nlohmann::json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    // Not only parse_error: a number beyond a double (1e400) is out_of_range, which reached
    // the caller as a 500. The library's "[json.exception.NAME.ID] " prefix is left out.
    std::string why = e.what();
    if (const auto end = why.find("] "); why.rfind("[json.exception.", 0) == 0 && end != why.npos)
      why.erase(0, end + 2);
    throw HttpError(400, "the body is not JSON: " + why);
  }
}

Response Response::json(int status, const nlohmann::json& value) {
  Response r;
  r.status = status;
  r.body = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  r.body += '\n';
  return r;
}

Response Response::error(int status, const std::string& message) {
  return json(status, {{"error", message}});
}

Response Response::no_content() {
  Response r;
  r.status = 204;
  r.content_type.clear();
  return r;
}

Response Response::deferred(std::function<Response()> run) {
  Response r;
  r.later = std::make_shared<Deferred>(Deferred{std::move(run)});
  return r;
}

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string percent_encode(std::string_view text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      const int hi = i + 2 < text.size() ? hex_value(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? hex_value(text[i + 2]) : -1;
      if (hi < 0 || lo < 0)
        throw HttpError(400, "bad percent escape in \"" + std::string(text) + "\"");
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

void parse_target(std::string_view target, std::string& path,
                  std::map<std::string, std::string>& query) {
  const auto mark = target.find('?');
  path = percent_decode(target.substr(0, mark), false);
  query.clear();
  if (mark == std::string_view::npos) return;
  auto rest = target.substr(mark + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const auto pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    auto key = percent_decode(pair.substr(0, eq), true);
    auto value =
        eq == std::string_view::npos ? std::string() : percent_decode(pair.substr(eq + 1), true);
    query[std::move(key)] = std::move(value);
  }
}

const char* reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Content";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 507:
      return "Insufficient Storage";
    default:
      return "Unknown";
  }
}

}  // namespace bowline::api
