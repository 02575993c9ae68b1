// Routes: METHOD + a path pattern with {param} segments -> a handler that gets the caller.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/http.hpp"
#include "store/records.hpp"

namespace bowline::api {

// Who is asking: the authenticated user.
struct Caller {
  store::User user;
  bool by_session = false;                 // a browser's session cookie rather than an API token
  std::optional<std::int64_t> session_id;  // that session's
  // When the credential itself ends (an API token's expiry, unix ms); nullopt: it does not.
  // What it makes (a token) ends no later.
  std::optional<std::int64_t> expires_at;
  bool admin() const { return user.has(store::Permission::Admin); }
};

// Who may call a route (for the route table and its tests; handlers check the details).
// Public: no authentication at all (logging in); the handler's Caller is empty.
// Console and Vnc: the space's owner or an admin, with that permission (WebSocket routes).
// Tunnel: the same with use-ssh for port 22, use-ports for a port the template lists.
enum class Access { Public, Any, Admin, AdminOrSelf, OwnerOrAdmin, Console, Vnc, Tunnel, Terminal };
const char* to_string(Access);

struct Route {
  using Handler = std::function<Response(const Caller&, const Request&)>;
  std::string method;
  std::string pattern;  // "/api/v1/spaces/{id}/start"
  Access access = Access::Any;
  Handler handler;
  std::vector<std::string> segments;
};

class Router {
 public:
  void add(std::string method, std::string pattern, Access access, Route::Handler handler);

  struct Match {
    const Route* route = nullptr;      // null: no route for this method and path
    std::vector<std::string> allowed;  // methods the path has, when route is null
  };
  // The route for the request, its parameters written into request.params. A literal segment
  // beats a {param} (POST /templates/validate is not a template named "validate").
  Match match(Request& request) const;

  const std::vector<Route>& routes() const { return routes_; }

 private:
  std::vector<Route> routes_;
};

}  // namespace bowline::api
