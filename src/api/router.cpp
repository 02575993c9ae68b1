#include "api/router.hpp"

#include <algorithm>

#include "util/strings.hpp"

namespace bowline::api {

const char* to_string(Access access) {
  switch (access) {
    case Access::Public:
      return "public";
    case Access::Console:
      return "owner or admin with use-web-terminal";
    case Access::Vnc:
      return "owner or admin with use-vnc";
    case Access::Terminal:
      return "owner or admin with use-web-terminal (a shell over SSH)";
    case Access::Tunnel:
      return "owner or admin with use-ssh (port 22) or use-ports (a port the template lists)";
    case Access::Any:
      return "any";
    case Access::Admin:
      return "admin";
    case Access::AdminOrSelf:
      return "admin or self";
    case Access::OwnerOrAdmin:
      return "owner or admin";
  }
  return "?";
}

namespace {

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  for (auto& part : util::split(path, '/'))
    if (!part.empty()) out.push_back(std::move(part));
  return out;
}

bool is_param(const std::string& segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

// -1: no match; otherwise how many literal segments matched (more is more specific).
int score(const Route& route, const std::vector<std::string>& parts) {
  if (route.segments.size() != parts.size()) return -1;
  int literal = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (is_param(route.segments[i])) continue;
    if (route.segments[i] != parts[i]) return -1;
    ++literal;
  }
  return literal;
}

}  // namespace

void Router::add(std::string method, std::string pattern, Access access, Route::Handler handler) {
  Route route{std::move(method), std::move(pattern), access, std::move(handler), {}};
  route.segments = split_path(route.pattern);
  routes_.push_back(std::move(route));
}

Router::Match Router::match(Request& request) const {
  const auto parts = split_path(request.path);
  Match result;
  int best = -1;
  for (const auto& route : routes_) {
    const int s = score(route, parts);
    if (s < 0) continue;
    if (route.method != request.method) {
      if (std::find(result.allowed.begin(), result.allowed.end(), route.method) ==
          result.allowed.end())
        result.allowed.push_back(route.method);
      continue;
    }
    if (s > best) {
      best = s;
      result.route = &route;
    }
  }
  if (result.route) {
    request.params.clear();
    for (std::size_t i = 0; i < parts.size(); ++i)
      if (is_param(result.route->segments[i]))
        request.params[result.route->segments[i].substr(1, result.route->segments[i].size() - 2)] =
            parts[i];
  }
  return result;
}

}  // namespace bowline::api
