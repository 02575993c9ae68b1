// The WebSocket routes into a space: its serial console (shared through the ConsoleHub), its
// VNC display (one bridge per browser) and a TCP tunnel to a guest port (one bridge per
// connection), and a shell over SSH (one session per browser tab). Every refusal is a plain HTTP
// answer before the upgrade: 401 (in Api::handle), 403 for a foreign Origin, 404 for a space that
// is not the caller's, 403 without the permission, with the template's switch off or for a port the
// template does not list, 409 when the space is not running. Once open, a socket stays open only
// while those checks still pass (SocketWatch). Each is worked out off the HTTP workers
// (Response::deferred): a resume, a TCP connect or an SSH login waits on the guest.
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <optional>

#include "api/api.hpp"
#include "api/console_hub.hpp"
#include "api/origin.hpp"
#include "api/rfb_view_only.hpp"
#include "api/socket_bridge.hpp"
#include "api/space_roles.hpp"
#include "api/terminal_bridge.hpp"
#include "util/strings.hpp"

namespace bowline::api {

namespace {

void check_running_upgrade(const store::Space& space, const Request& request) {
  if (space.state != store::SpaceState::Running)
    throw HttpError(409,
                    "the space is " + std::string(store::to_string(space.state)) + ", not running");
  if (util::to_lower(request.header("upgrade")) != "websocket")
    throw HttpError(426, "this is a WebSocket: send Upgrade: websocket");
}

std::uint16_t port_of(const Request& request) {
  const auto& text = request.param("port");
  unsigned long port = 0;
  if (text.empty() || text.size() > 5 ||
      text.find_first_not_of("0123456789") != std::string::npos || (port = std::stoul(text)) == 0 ||
      port > 65535)
    throw HttpError(400, "\"" + text + "\" is not a port (1-65535)");
  return static_cast<std::uint16_t>(port);
}

// A side of the terminal's window from the query (?cols=&rows=), as a resize frame takes it:
// 1 to kMaxTerminalCells (four digits, so stoul neither overflows nor passes the bound).
unsigned terminal_cells(const Request& request, const char* name, unsigned fallback) {
  const auto it = request.query.find(name);
  if (it == request.query.end()) return fallback;
  if (it->second.empty() || it->second.size() > 4 ||
      it->second.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(it->second) == 0)
    throw HttpError(400, std::string(name) + " must be a number of cells from 1 to " +
                             std::to_string(kMaxTerminalCells));
  return static_cast<unsigned>(std::stoul(it->second));
}

std::string listed_ports(const spec::Spec& spec) {
  std::string out;
  for (const auto& p : spec.ports) out += (out.empty() ? "" : ", ") + std::to_string(p.port);
  return out.empty() ? "none" : out;
}

}  // namespace

store::Space Api::access_space(const Caller& caller, const Request& request,
                               store::Permission permission) {
  check_origin(caller, request);
  const auto space = visible_space(caller, request.param("id"), store::ShareRole::Viewer);
  if (!has_permission(caller, permission))
    throw HttpError(403, std::string("this needs the permission ") + store::to_string(permission));
  const auto spec = engine_.space_spec(space);
  const bool console = permission == store::Permission::UseWebTerminal;
  if (console ? !spec.console : !spec.display)
    throw HttpError(403, console ? "the space's template has no console (console: false)"
                                 : "the space's template has no display (display: false)");
  return space;
}

// A suspended space resumes for a caller who may open it (checked before this): the upgrade
// waits for the resume, seconds, instead of being refused. Not for the re-checks of a socket
// that is open already.
store::Space Api::awake(const Caller& caller, store::Space space, const Request& request,
                        const std::string& why) {
  if ((space.state != store::SpaceState::Suspended &&
       space.state != store::SpaceState::Suspending) ||
      util::to_lower(request.header("upgrade")) != "websocket" ||
      !holds(store_, caller, space, store::ShareRole::User))  // a viewer only watches
    return space;
  options_.access->wake(space.id, why);
  return visible_space(caller, space.id, store::ShareRole::Viewer);
}

store::Space Api::tunnel_space(const Caller& caller, const Request& request, bool wake) {
  check_origin(caller, request);
  auto space = visible_space(caller, request.param("id"), store::ShareRole::User);
  const auto port = port_of(request);
  if (port != 22) {
    const auto spec = engine_.space_spec(space);
    bool listed = false;
    for (const auto& p : spec.ports) listed = listed || p.port == port;
    if (!listed)
      throw HttpError(403, "port " + std::to_string(port) +
                               " is not one the space's template lists in ports: (" +
                               listed_ports(spec) + "); only 22 and those are reachable");
  }
  const auto permission = port == 22 ? store::Permission::UseSsh : store::Permission::UsePorts;
  if (!has_permission(caller, permission))
    throw HttpError(403, "port " + std::to_string(port) + " needs the permission " +
                             store::to_string(permission));
  if (wake) space = awake(caller, space, request, "tunnel to port " + std::to_string(port));
  check_running_upgrade(space, request);
  return space;
}

store::Space Api::terminal_space(const Caller& caller, const Request& request, bool wake) {
  check_origin(caller, request);
  auto space = visible_space(caller, request.param("id"), store::ShareRole::User);
  if (!has_permission(caller, store::Permission::UseWebTerminal))
    throw HttpError(403, "the terminal needs the permission use-web-terminal");
  if (wake) space = awake(caller, space, request, "terminal");
  check_running_upgrade(space, request);
  return space;
}

std::uint64_t Api::watch_socket(const Request& request, SocketCheck check,
                                std::shared_ptr<SocketPeer> peer) {
  auto saved = std::make_shared<Request>(request);
  saved->body.clear();
  // The space is in use, never suspended for being idle, while the socket is open.
  auto held = options_.access->hold(request.param("id"));
  return sockets_->add(
      [this, saved, check = std::move(check), held = std::move(held)] {
        const auto caller = caller_of(*saved);
        if (!caller) return false;
        check(*caller, *saved);  // throws when refused now
        return true;
      },
      [peer = std::move(peer)] { peer->close(); });
}

void Api::add_access_routes() {
  add_console_route();
  add_vnc_route();
  add_tunnel_route();
  add_terminal_route();
}

void Api::add_console_route() {
  router_.add(
      "GET", "/api/v1/spaces/{id}/console", Access::Console,
      [this](const Caller& caller, const Request& request) {
        return Response::deferred([this, caller, request] { return console(caller, request); });
      });
}

Response Api::console(const Caller& caller, const Request& request) {
  const auto space = awake(caller, access_space(caller, request, store::Permission::UseWebTerminal),
                           request, "console");
  check_running_upgrade(space, request);
  struct Viewer {
    std::mutex mutex;
    std::optional<std::uint64_t> id, watch;
    std::weak_ptr<SocketPeer> peer;
  };
  auto viewer = std::make_shared<Viewer>();
  auto upgrade = std::make_shared<Upgrade>();
  const auto key = space.id;  // the space's, never its domain name's
  auto* hub = consoles_.get();
  // Not "running": a console viewer stays attached across a restart and sees the new
  // boot.
  // A viewer's keys go nowhere; the role is asked again with every check.
  auto typing =
      std::make_shared<std::atomic<bool>>(holds(store_, caller, space, store::ShareRole::User));
  auto check = [this, typing](const Caller& c, const Request& r) {
    typing->store(holds(store_, c, access_space(c, r, store::Permission::UseWebTerminal),
                        store::ShareRole::User));
  };
  upgrade->open = [this, hub, key, viewer, request, check](std::shared_ptr<SocketPeer> peer) {
    std::lock_guard lock(viewer->mutex);
    viewer->watch = watch_socket(request, check, peer);
    viewer->peer = peer;
    viewer->id = hub->attach(key, std::move(peer));
  };
  upgrade->message = [hub, key, viewer, typing](std::string bytes) {
    if (!typing->load()) return;
    if (hub->input(key, std::move(bytes))) return;
    std::shared_ptr<SocketPeer> peer;
    {
      std::lock_guard lock(viewer->mutex);
      peer = viewer->peer.lock();
    }
    if (peer) peer->close();  // typing faster than the guest reads, for a megabyte
  };
  upgrade->close = [this, hub, key, viewer] {
    std::lock_guard lock(viewer->mutex);
    if (viewer->watch) sockets_->remove(*viewer->watch);
    if (viewer->id) hub->detach(key, *viewer->id);
  };
  Response response;
  response.upgrade = std::move(upgrade);
  return response;
}

void Api::add_vnc_route() {
  router_.add("GET", "/api/v1/spaces/{id}/vnc", Access::Vnc,
              [this](const Caller& caller, const Request& request) {
                return Response::deferred([this, caller, request] {
                  const auto space =
                      awake(caller, access_space(caller, request, store::Permission::UseVnc),
                            request, "display");
                  check_running_upgrade(space, request);
                  // A viewer's display shows, but its keys and pointer never reach the
                  // guest; one opened with input closes when the role drops to viewer.
                  const bool input = holds(store_, caller, space, store::ShareRole::User);
                  BridgeOptions options;
                  if (!input)
                    options.filter_input = [rfb = std::make_shared<RfbViewOnly>()](
                                               std::string bytes) { return rfb->filter(bytes); };
                  const int fd = options_.access->open_display(space.id);
                  auto check = [this, input](const Caller& c, const Request& r) {
                    const auto now = access_space(c, r, store::Permission::UseVnc);
                    check_running_upgrade(now, r);
                    if (input && !holds(store_, c, now, store::ShareRole::User))
                      throw HttpError(403, "your share of the space is view-only now");
                  };
                  return bridge_upgrade(
                      fd, std::move(options),
                      [this, request, check](std::shared_ptr<SocketPeer> peer) {
                        return watch_socket(request, check, std::move(peer));
                      },
                      [this](std::uint64_t id) { sockets_->remove(id); });
                });
              });
}

void Api::add_tunnel_route() {
  router_.add("GET", "/api/v1/spaces/{id}/tunnel/{port}", Access::Tunnel,
              [this](const Caller& caller, const Request& request) {
                return Response::deferred([this, caller, request] {
                  const auto space = tunnel_space(caller, request, /*wake=*/true);
                  const int fd = options_.access->open_port(space.id, port_of(request));
                  auto check = [this](const Caller& c, const Request& r) { tunnel_space(c, r); };
                  return bridge_upgrade(
                      fd, {.half_close = true, .filter_input = {}},
                      [this, request, check](std::shared_ptr<SocketPeer> peer) {
                        return watch_socket(request, check, std::move(peer));
                      },
                      [this](std::uint64_t id) { sockets_->remove(id); });
                });
              });
}

// The window's size in the query (?cols=&rows=): the shell's PTY has it from the start.
void Api::add_terminal_route() {
  router_.add("GET", "/api/v1/spaces/{id}/terminal", Access::Terminal,
              [this](const Caller& caller, const Request& request) {
                return Response::deferred([this, caller, request] {
                  const auto space = terminal_space(caller, request, /*wake=*/true);
                  auto shell =
                      options_.access->open_terminal(space.id, terminal_cells(request, "cols", 80),
                                                     terminal_cells(request, "rows", 24));
                  auto check = [this](const Caller& c, const Request& r) { terminal_space(c, r); };
                  return terminal_upgrade(
                      std::move(shell), {},
                      [this, request, check](std::shared_ptr<SocketPeer> peer) {
                        return watch_socket(request, check, std::move(peer));
                      },
                      [this](std::uint64_t id) { sockets_->remove(id); });
                });
              });
}

}  // namespace bowline::api
