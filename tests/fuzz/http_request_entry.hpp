// What bowline does with a request's line and headers, under fuzzing: Beast's parser with the
// server's limits and the conversion into api::Request (parse_request_bytes, http_server.hpp),
// then bowline's own readers of what a client controls (cookie_value, client_address,
// served_over_https, percent_decode). Shared by the libFuzzer target (http_request_fuzz.cpp)
// and the corpus replay test (tests/unit/api/http_request_fuzz_replay_test.cpp).
//
// Only HttpError may leave our readers (a 400); a parsed request is what a handler may rely
// on: lower-case header names, a body within the limit, a path without its query; and
// percent-encoding any bytes decodes back to them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "api/http.hpp"
#include "api/http_server.hpp"
#include "api/web_session.hpp"

namespace bowline::api::fuzz {

inline void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "HTTP request invariant broken: %s\n", what);
    std::abort();
  }
}

inline std::string percent_encode(const std::string& bytes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : bytes) {
    out += '%';
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

inline void check_request(const Request& r, const HttpServerOptions& options) {
  check(!r.method.empty(), "a request has a method");
  check(r.body.size() <= options.body_limit, "a body is within the limit");
  check(r.path.size() <= r.target.size(), "the path comes out of the target");
  for (const auto& [name, value] : r.headers)
    for (char c : name) check(!(c >= 'A' && c <= 'Z'), "header names are lower case");
  const auto cookie = cookie_value(r.header("cookie"), kSessionCookie);
  check(cookie.find(';') == std::string::npos, "a cookie value stops at ';'");
  (void)served_over_https(r);
  // A trusted peer, so that X-Forwarded-For is read.
  Request proxied = r;
  proxied.remote = "10.0.0.1:8080";
  static const std::vector<spec::Ipv4Network> proxies = {*spec::Ipv4Network::parse("10.0.0.0/8")};
  const auto address = client_address(proxied, proxies);
  check(!address.empty() && address.size() <= 45 && address.find(',') == std::string::npos,
        "a client address is one address");
}

// Bowline's readers on raw bytes, outside any request.
inline void check_readers(const std::string& bytes) {
  try {
    const auto decoded = percent_decode(bytes, true);
    check(decoded.size() <= bytes.size(), "decoding never lengthens");
    std::string path;
    std::map<std::string, std::string> query;
    parse_target(bytes, path, query);
  } catch (const HttpError& e) {
    check(e.status() == 400, "a bad escape is a 400");
  }
  check(percent_decode(percent_encode(bytes), false) == bytes, "percent-encoding round-trips");
  (void)cookie_value(bytes, kSessionCookie);
}

inline void run_one(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  HttpServerOptions small;  // so that the fuzzer reaches the body limit too
  small.body_limit = 64;
  for (const auto& options : {HttpServerOptions{}, small}) {
    const auto parsed = parse_request_bytes(bytes, options);
    if (parsed.status != 0) {
      check(parsed.status == 400 || parsed.status == 413 || parsed.status == 431,
            "a refusal is 400, 413 or 431");
      check(!parsed.error.empty(), "a refusal says why");
    } else if (!parsed.incomplete) {
      check_request(parsed.request, options);
    }
  }
  check_readers(bytes);
}

}  // namespace bowline::api::fuzz
