// Redirects of the login steps of previews and single sign-on: a 302 that no cache keeps, and
// the check that a path to land on stays on this origin.
#pragma once

#include <algorithm>
#include <string>

#include "api/http.hpp"

namespace bowline::api {

inline Response redirect_to(const std::string& location) {
  Response r;
  r.status = 302;
  r.content_type = "";
  r.headers.emplace_back("Location", location);
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

// `path` when it stays on this origin, else "/": never "//elsewhere", a backslash or a control
// character, which would send a browser away (an open redirect).
inline std::string local_path(const std::string& path) {
  const bool ok =
      !path.empty() && path[0] == '/' && (path.size() == 1 || path[1] != '/') &&
      path.find('\\') == std::string::npos &&
      std::none_of(path.begin(), path.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
  return ok ? path : "/";
}

}  // namespace bowline::api
