// The WebSocket routes into a space: its serial console (shared through the ConsoleHub) and
// its VNC display (one bridge per browser). Every refusal is a plain HTTP answer before the
// upgrade: 401 (in Api::handle), 403 for a foreign Origin, 404 for a space that is not the
// caller's, 403 without the permission or with the template's switch off, 409 when the
// space is not running.
#include <unistd.h>

#include <mutex>
#include <optional>

#include "api/api.hpp"
#include "api/console_hub.hpp"
#include "api/vnc_bridge.hpp"
#include "util/strings.hpp"

namespace bowline::api {

namespace {

// The Origin a page of this server sends: its scheme and the Host the browser used.
bool same_origin(const Request& request) {
  const auto origin = util::to_lower(request.header("origin"));
  const auto host = util::to_lower(request.header("host"));
  if (host.empty()) return false;
  return origin == "http://" + host || origin == "https://" + host;
}

}  // namespace

store::Space Api::access_space(const Caller& caller, const Request& request,
                               store::Permission permission) {
  // Browsers send Origin on every WebSocket handshake; a page of another site must not ride
  // the browser's cookie into a console (cross-site WebSocket hijacking). Only a client with
  // an API token (the CLI), which no web page can make a browser send, may leave it out.
  if (request.header("origin").empty()) {
    if (caller.by_session) throw HttpError(403, "a WebSocket from a browser needs an Origin");
  } else if (!same_origin(request)) {
    throw HttpError(403, "the Origin " + request.header("origin") + " is not this server's");
  }
  const auto space = visible_space(caller, request.param("id"));
  if (!has_permission(caller, permission))
    throw HttpError(403, std::string("this needs the permission ") + store::to_string(permission));
  const auto spec = engine_.space_spec(space);
  const bool console = permission == store::Permission::UseWebTerminal;
  if (console ? !spec.console : !spec.display)
    throw HttpError(403, console ? "the space's template has no console (console: false)"
                                 : "the space's template has no display (display: false)");
  if (space.state != store::SpaceState::Running)
    throw HttpError(409,
                    "the space is " + std::string(store::to_string(space.state)) + ", not running");
  if (util::to_lower(request.header("upgrade")) != "websocket")
    throw HttpError(426, "this is a WebSocket: send Upgrade: websocket");
  return space;
}

void Api::add_access_routes() {
  router_.add("GET", "/api/v1/spaces/{id}/console", Access::Console,
              [this](const Caller& caller, const Request& request) {
                const auto space = access_space(caller, request, store::Permission::UseWebTerminal);
                struct Viewer {
                  std::mutex mutex;
                  std::optional<std::uint64_t> id;
                };
                auto viewer = std::make_shared<Viewer>();
                auto upgrade = std::make_shared<Upgrade>();
                const auto key = space.id;  // the space's, never its domain name's
                auto* hub = consoles_.get();
                upgrade->open = [hub, key, viewer](std::shared_ptr<SocketPeer> peer) {
                  std::lock_guard lock(viewer->mutex);
                  viewer->id = hub->attach(key, std::move(peer));
                };
                upgrade->message = [hub, key](std::string bytes) {
                  hub->input(key, std::move(bytes));
                };
                upgrade->close = [hub, key, viewer] {
                  std::lock_guard lock(viewer->mutex);
                  if (viewer->id) hub->detach(key, *viewer->id);
                };
                Response response;
                response.upgrade = std::move(upgrade);
                return response;
              });

  router_.add("GET", "/api/v1/spaces/{id}/vnc", Access::Vnc,
              [this](const Caller& caller, const Request& request) {
                const auto space = access_space(caller, request, store::Permission::UseVnc);
                // Opened before the upgrade, so a display that cannot be reached is a 502
                // the browser can show rather than a socket that closes at once.
                const int fd = options_.access->open_display(space.id);
                struct Session {
                  // An upgrade that never happened (a failed handshake) still closes the fd.
                  ~Session() {
                    if (fd >= 0) ::close(fd);
                  }
                  int fd = -1;
                  std::mutex mutex;
                  std::unique_ptr<VncBridge> bridge;
                  bool closed = false;
                };
                auto session = std::make_shared<Session>();
                session->fd = fd;
                auto upgrade = std::make_shared<Upgrade>();
                upgrade->open = [session](std::shared_ptr<SocketPeer> peer) {
                  std::lock_guard lock(session->mutex);
                  if (session->closed) return;
                  session->bridge =
                      std::make_unique<VncBridge>(std::exchange(session->fd, -1), std::move(peer));
                };
                upgrade->message = [session](std::string bytes) {
                  std::lock_guard lock(session->mutex);
                  if (session->bridge) session->bridge->input(std::move(bytes));
                };
                upgrade->close = [session] {
                  std::unique_ptr<VncBridge> bridge;
                  {
                    std::lock_guard lock(session->mutex);
                    session->closed = true;
                    bridge = std::move(session->bridge);
                  }
                  bridge.reset();  // joins its thread, outside the lock
                };
                Response response;
                response.upgrade = std::move(upgrade);
                return response;
              });
}

}  // namespace bowline::api
