#include "api/routes_static.hpp"

#include <cctype>

#include <sys/stat.h>

#include <array>
#include <fstream>
#include <sstream>
#include <utility>

#include "engine/event_kinds.hpp"
#include "util/files.hpp"
#include "util/hash.hpp"
#include "util/strings.hpp"

namespace bowline::api {

namespace fs = std::filesystem;

namespace {

// /ui/vendor/NAME/... -> web_root/node_modules/DIR/...: only these packages, whose files are
// what the browser loads (a package is added here when the UI imports it).
constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kVendor{{
    {"novnc", "@novnc/novnc"},
    {"xterm", "@xterm/xterm"},
    {"xterm-fit", "@xterm/addon-fit"},
    {"htm", "htm"},
    {"uplot", "uplot"},
}};

bool inside(const fs::path& base, const fs::path& file) {
  auto b = base.begin();
  auto f = file.begin();
  for (; b != base.end(); ++b, ++f)
    if (f == file.end() || *b != *f) return false;
  return f != file.end();
}

std::string read_whole(const fs::path& file, bool& ok) {
  auto text = util::read_file(file.string());
  ok = text.has_value();
  return text.value_or("");
}

Response plain(int status, const std::string& text) {
  Response r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = text + "\n";
  return r;
}

void add_security_headers(Response& r) {
  r.headers.emplace_back("Content-Security-Policy", content_security_policy());
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  r.headers.emplace_back("X-Frame-Options", "DENY");
}

}  // namespace

const char* content_security_policy() {
  // No inline or foreign scripts; fetches, EventSource and WebSockets (ws: and wss: on the
  // same origin count as 'self') only to this server. data: images are noVNC's cursors.
  // Inline styles only because xterm.js writes its theme into <style> elements it creates.
  return "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
         "img-src 'self' data: blob:; "
         "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
         "form-action 'self'; frame-ancestors 'none'";
}

std::string content_type_for(const fs::path& file) {
  static const std::array<std::pair<std::string_view, std::string_view>, 11> types{{
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".map", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".woff2", "font/woff2"},
      {".txt", "text/plain; charset=utf-8"},
  }};
  const auto ext = util::to_lower(file.extension().string());
  for (const auto& [e, type] : types)
    if (ext == e) return std::string(type);
  return "";
}

std::optional<fs::path> file_under(const fs::path& base, std::string_view relative) {
  if (relative.empty()) return std::nullopt;
  fs::path path = base;
  for (const auto& segment : util::split(std::string(relative), '/')) {
    if (segment.empty() || segment.front() == '.' ||
        segment.find_first_of(std::string_view("\\\0", 2)) != std::string::npos)
      return std::nullopt;
    path /= segment;
  }
  // Symbolic links are followed, but the file they reach must still be inside the base.
  std::error_code ec;
  const auto real_base = fs::canonical(base, ec);
  if (ec) return std::nullopt;
  const auto real = fs::canonical(path, ec);
  if (ec || !inside(real_base, real) || !fs::is_regular_file(real, ec)) return std::nullopt;
  return real;
}

StaticFiles::StaticFiles(fs::path web_root) : root_(std::move(web_root)) {}

void StaticFiles::add_generated(const std::string& path, std::string body,
                                std::string content_type) {
  const auto tag = "\"g-" + util::sha256_hex(body).substr(0, 16) + "\"";
  generated_[path] = {std::move(body), std::move(content_type), tag};
}

std::string event_kinds_module() {
  std::string out =
      "// Made by the server from src/engine/event_kinds.hpp: the kinds of event the event "
      "stream carries.\n";
  for (const auto& kind : engine::event_kinds()) {
    std::string constant;
    for (char c : kind.name)
      constant += (c == '.' || c == '_') ? '_' : static_cast<char>(std::toupper(c));
    out += "export const " + constant + " = \"" + std::string(kind.name) + "\";\n";
  }
  return out;
}

bool StaticFiles::handles(const std::string& path) {
  return path == "/" || path == "/ui" || path.rfind("/ui/", 0) == 0;
}

std::optional<fs::path> StaticFiles::file_for(const std::string& path) const {
  if (path == "/" || path == "/ui" || path == "/ui/") return file_under(root_ / "ui", "index.html");
  std::string_view rest(path);
  rest.remove_prefix(4);  // "/ui/"
  constexpr std::string_view vendor = "vendor/";
  if (rest.substr(0, vendor.size()) != vendor) return file_under(root_ / "ui", rest);
  rest.remove_prefix(vendor.size());
  const auto slash = rest.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  for (const auto& [name, dir] : kVendor)
    if (rest.substr(0, slash) == name)
      return file_under(root_ / "node_modules" / dir, rest.substr(slash + 1));
  return std::nullopt;
}

Response StaticFiles::handle(const Request& request) const {
  if (request.method != "GET") {
    auto r = plain(405, request.method + " is not allowed here; use GET");
    r.headers.emplace_back("Allow", "GET");
    return r;
  }
  if (const auto it = generated_.find(request.path); it != generated_.end()) {
    Response r;
    add_security_headers(r);
    r.headers.emplace_back("Cache-Control", "no-cache");
    r.headers.emplace_back("ETag", it->second.tag);
    if (request.header("if-none-match") == it->second.tag) {
      r.status = 304;
      r.content_type.clear();
      return r;
    }
    r.body = it->second.body;
    r.content_type = it->second.content_type;
    return r;
  }
  const auto file = file_for(request.path);
  const auto type = file ? content_type_for(*file) : std::string();
  if (type.empty()) return plain(404, "no such file: " + request.path);

  struct stat st {};
  if (::stat(file->c_str(), &st) != 0) return plain(404, "no such file: " + request.path);
  // Size and modification time name the version: a changed file gets a new tag.
  std::ostringstream tag;
  tag << '"' << std::hex << st.st_size << '-' << st.st_mtim.tv_sec << '.' << st.st_mtim.tv_nsec
      << '"';
  Response r;
  add_security_headers(r);
  // no-cache: the browser keeps the file but asks each time (a cheap 304), so an upgraded
  // server never runs an old UI.
  r.headers.emplace_back("Cache-Control", "no-cache");
  r.headers.emplace_back("ETag", tag.str());
  if (request.header("if-none-match") == tag.str()) {
    r.status = 304;
    r.content_type.clear();
    return r;
  }
  bool ok = false;
  r.body = read_whole(*file, ok);
  if (!ok) return plain(500, "cannot read " + request.path);
  r.content_type = type;
  return r;
}

}  // namespace bowline::api
