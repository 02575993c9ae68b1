// The web UI's static files: GET / and /ui/... from the web root (web/ in the source tree), and
// a few npm packages' files under /ui/vendor/NAME/... These are the only routes besides logging
// in that need no authentication, so they serve nothing but files under the root with a known
// type, with a strict Content-Security-Policy.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "api/http.hpp"

namespace bowline::api {

class StaticFiles {
 public:
  // `web_root` holds ui/ (the app: index.html, *.js, *.css) and node_modules/ (npm ci).
  explicit StaticFiles(std::filesystem::path web_root);

  // True for the paths this answers: "/", "/ui" and "/ui/...".
  static bool handles(const std::string& path);
  // 200 with the file, 304 when If-None-Match matches, 404 for anything else under /ui,
  // 405 for methods other than GET.
  Response handle(const Request& request) const;

  const std::filesystem::path& root() const { return root_; }

  // A file the server makes instead of reading it (e.g. /ui/event-kinds.js), served like the
  // others; it wins over a file of the same path under the root.
  void add_generated(const std::string& path, std::string body, std::string content_type);

 private:
  // The file a path under /ui names, or nullopt (not served).
  std::optional<std::filesystem::path> file_for(const std::string& path) const;

  std::filesystem::path root_;
  struct Generated {
    std::string body;
    std::string content_type;
    std::string tag;
  };
  std::map<std::string, Generated> generated_;
};

// /ui/event-kinds.js: the engine's event kinds as constants for the web UI
// (SPACE_STATE = "space.state", ...), so the page never spells one by hand.
std::string event_kinds_module();

// `relative` ("a/b.js", already percent-decoded) under `base`, or nullopt when a segment is
// empty, ".", "..", hidden (".git") or holds a NUL or backslash, or when the file, after
// following symbolic links, is not a regular file inside `base`.
std::optional<std::filesystem::path> file_under(const std::filesystem::path& base,
                                                std::string_view relative);

// The Content-Type for a file name by its extension; "" for a type that is not served.
std::string content_type_for(const std::filesystem::path& file);

// The headers every static answer carries (Content-Security-Policy and friends).
const char* content_security_policy();

}  // namespace bowline::api
