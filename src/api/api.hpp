// The REST API of docs/api.md: routes over the store and the engine, token authentication on
// every route, permission checks, and errors mapped to status codes. Transport-free: the
// HttpServer hands it Requests; tests may too.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "api/audit_trail.hpp"
#include "api/http.hpp"
#include "api/preview_names.hpp"
#include "api/preview_passes.hpp"
#include "api/report_cache.hpp"
#include "api/router.hpp"
#include "api/socket_watch.hpp"
#include "api/space_owners.hpp"
#include "api/space_stats.hpp"
#include "api/spaces_list.hpp"
#include "api/sso_users.hpp"
#include "api/user_slots.hpp"
#include "api/web_session.hpp"
#include "engine/engine.hpp"
#include "engine/event_bus.hpp"
#include "engine/space_archive.hpp"
#include "sso/oidc.hpp"
#include "store/store.hpp"

namespace bowline::api {

struct SsoFlows;

struct SsoOptions {
  std::shared_ptr<sso::OidcClient> client;  // the provider; unset: single sign-on is off
  SsoPolicy policy;
};

struct ApiOptions {
  // A node's record for GET /api/v1/nodes ({name, kind, runtimes, checks, ...}), for each of
  // the engine's nodes. Unset: the node's own report().
  std::function<nlohmann::json(engine::Node&)> report;
  // Each node's report is made again once it is this old (or on ?refresh=1 from an admin).
  std::int64_t node_report_max_age_ms = 15'000;
  const util::Clock* clock = nullptr;      // unset: the system clock
  std::size_t replay_batch = 500;          // events read from the store at a time when replaying
  std::size_t replay_window = 512 * 1024;  // unsent bytes a replay waits for before reading on
  SessionOptions sessions;
  // The console and display of spaces, for the WebSockets; unset: the engine's.
  engine::SpaceAccess* access = nullptr;
  std::size_t console_scrollback = 64 * 1024;  // bytes a newcomer to a console gets first
  // Open WebSockets into spaces (consoles, displays, terminals, tunnels) and event streams one
  // user may hold at once; more are refused with 429.
  std::size_t max_sockets_per_user = 64;
  std::size_t max_streams_per_user = 16;
  // Answers one user may have waiting on a space at once (a resume, a tunnel's TCP connect, a
  // terminal's SSH login, a port check), each on a thread of its own rather than an HTTP
  // worker's; more are refused with 429.
  std::size_t max_slow_requests_per_user = 4;
  // The largest disk an import takes whatever the owner's quota (server.kvm.max_image_size).
  std::uint64_t max_import_size = std::uint64_t{64} << 30;
  // Where the details of a 5xx go, one line each, under the error id its answer carries;
  // unset: standard error.
  std::function<void(const std::string&)> log;
  // The audit log (audit_trail.hpp): on by default, in the store only.
  AuditOptions audit;
  // Writes a backup archive of the server (server/backup.hpp) to the sink, for GET
  // /api/v1/backup; unset: that route answers 404.
  std::function<void(const std::function<void(std::string_view)>& sink)> backup;
  // Preview URLs of guest ports (preview_names.hpp); off without a domain.
  PreviewOptions preview;
  // Single sign-on (routes_sso.cpp): off without a client.
  SsoOptions sso;
};

class ConsoleHub;
struct ImportState;
struct ImportAsk;

class Api {
 public:
  Api(store::Store& store, engine::Engine& engine, engine::EventBus& events, ApiOptions options);
  ~Api();
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  // Never throws: every failure becomes an error response. An answer from a request that
  // carried a valid credential says so (Response::authenticated).
  Response handle(Request& request);

  const Router& router() const { return router_; }
  // The port the server got when its settings said any (0): previews' URLs name it. Before
  // the first request.
  void listening_on(std::uint16_t port);
  // Whether the request is for a preview host (answered by preview(), not the routes).
  bool is_preview_request(const Request& request) const;
  // Event streams currently listening on the bus (each stops listening when it closes).
  int listening_streams() const { return stream_listeners_.load(); }

 private:
  void add_user_routes();
  void add_template_routes();
  void add_space_routes();
  void add_event_routes();
  void add_node_routes();
  void add_node_admin_routes();  // cordon, uncordon, drain
  void add_pool_routes();
  void add_session_routes();
  void add_access_routes();
  void add_stats_routes();
  void add_disk_routes();
  void add_audit_routes();
  void add_backup_route();
  void add_snapshot_routes();
  void add_share_routes();
  // Single sign-on (routes_sso.cpp).
  void add_sso_routes();
  void add_sso_web_routes();
  void add_sso_device_routes();
  sso::OidcClient& oidc();  // HttpError 404 when single sign-on is off
  std::string sso_redirect_uri() const;
  Response sso_begin(const Request& request);
  Response sso_callback(const Request& request);
  Response sso_device_poll(const Request& request);
  store::User sso_login(const Request& request, const nlohmann::json& claims, const char* how);
  // Preview URLs (routes_preview.cpp).
  void add_preview_routes();
  struct PreviewHit {
    store::Space space;
    spec::ServicePort port;
  };
  PreviewHit preview_space(const Caller& caller, const std::string& host);
  std::string preview_origin(const std::string& host) const;
  Response preview(Request& request);
  std::optional<Caller> preview_caller(const std::string& pass, const std::string& host);
  // The relay into the guest; `space_id` is set once the host names a space the caller may open.
  Response preview_relay(const Caller& caller, const Request& request, const std::string& host,
                         std::shared_ptr<void> slot, std::string& space_id);
  // The audit entry of a request to a preview host that opened a relay or was refused.
  void audit_preview(const Request& request, const std::optional<store::User>& user,
                     const Response& response, const std::string& space_id = {});
  // The space when the caller may change its shares (its owner or an admin): 404 / 403 / 409.
  store::Space shared_space(const Caller& caller, const std::string& id);
  void add_export_routes();
  // Export and import (routes_transfer.cpp).
  void add_import_route();
  std::shared_ptr<Upgrade> import_upgrade(const ImportAsk& ask);
  std::string import_archive(ImportState& state, const ImportAsk& ask);
  std::string make_imported_space(const ImportAsk& ask,
                                  const engine::archive::ArchiveReader& reader,
                                  const std::filesystem::path& staged,
                                  std::optional<std::int64_t>& made_template);
  // Runs `body` on a thread of its own, which the destructor waits for.
  void on_own_thread(std::function<void()> body);
  // Held by work that runs on after its request was answered (deferred answers, threads of
  // its own): the destructor waits until every copy is gone.
  std::shared_ptr<void> own_work();
  // What route() learnt of a request, for the audit log.
  struct Routed {
    std::optional<store::User> user;  // set once its credential is good
    bool socket = false;              // a WebSocket route into a space
  };
  // The route table's answer for `request`.
  Response route(Request& request, Routed& routed);
  // Records `request` in the audit log when it changes state or opens a socket (a deferred
  // answer when it is given).
  void audit(const Request& request, const Routed& routed, Response& response);
  // `body`'s answer, or the error response for what it threw.
  Response guarded(const Request& request, const std::function<Response()>& body);
  // A route's deferred answer, made to take one of the caller's slow slots while it runs and
  // to answer errors as handle() does; `slot` goes to the socket or stream it opens.
  Response defer(Response response, const Request& request, const Caller& caller,
                 std::shared_ptr<void> slot);
  // Steps of the add_*_routes above.
  void add_user_credential_routes();
  void add_user_quota_route();
  void add_user_delete_route();
  void add_space_change_routes();
  void add_console_route();
  void add_vnc_route();
  void add_tunnel_route();
  void add_terminal_route();
  Response console(const Caller& caller, const Request& request);
  // The caller a request's credential names now (its API token, else its session cookie);
  // nullopt when neither is valid. `csrf`: the session's CSRF secret, for a session.
  std::optional<Caller> caller_of(const Request& request, std::string* csrf = nullptr);
  // The checks of a console or display route, before its upgrade and for as long as it is
  // open: Origin, visibility, permission, the template's switch. Returns the space; the route
  // checks "running" itself (a console viewer outlives a restart).
  store::Space access_space(const Caller& caller, const Request& request,
                            store::Permission permission);
  // The tunnel's: Origin, visibility, use-ssh for port 22 or use-ports for a port the
  // template lists, a running space.
  // `wake`: a suspended space is resumed first (the route's own call, not a socket's re-check).
  store::Space tunnel_space(const Caller& caller, const Request& request, bool wake = false);
  store::Space awake(const Caller& caller, store::Space space, const Request& request,
                     const std::string& why);
  // The browser terminal's: Origin, visibility, use-web-terminal, a running space.
  store::Space terminal_space(const Caller& caller, const Request& request, bool wake = false);
  // A 5xx answer: `said` and a fresh error id for the caller, `detail` to the log.
  Response server_error(const Request& request, int status, const std::string& said,
                        const std::string& detail);
  // A route's own checks, run again for an open socket (socket_watch.hpp).
  using SocketCheck = std::function<void(const Caller&, const Request&)>;
  // Watches `peer` until unwatch(): closed once `check` refuses the request's credential.
  std::uint64_t watch_socket(const Request& request, SocketCheck check,
                             std::shared_ptr<SocketPeer> peer);
  // Watches what a request opened (an event stream, an export) until unwatch: `end` runs
  // once the request's credential is no longer good or `check` throws for it.
  std::uint64_t watch_credential(const Request& request, SocketCheck check,
                                 std::function<void()> end);
  // The upgrade's socket is watched while it is open (watch_credential), closed once refused.
  void watch_upgrade(Upgrade& upgrade, const Request& request, SocketCheck check);

  // The space with `id` when the caller holds `need` on it (space_roles.hpp: its owner and
  // admins hold all); HttpError 404 when they may not see it at all (also for a space that
  // exists but is another user's), 403 naming the role when their share's is too low.
  store::Space visible_space(const Caller& caller, const std::string& id, store::ShareRole need);
  nlohmann::json space_json_of(const store::Space& space);
  // Whose disks a request means: the caller, or the named user for an admin (403 otherwise).
  store::User disk_owner(const Caller& caller, const std::optional<std::string>& owner);
  nlohmann::json connect_json(const store::Space& space, const std::string& owner);
  nlohmann::json pool_json_of(const store::Pool& pool);
  nlohmann::json accepted_json(const std::string& space_id, std::int64_t operation);
  // user_json with the user's quota and usage.
  nlohmann::json user_with_quota(const store::User& user);
  // The user named in the path when the caller is that user or an admin; 403 / 404 otherwise.
  store::User target_user(const Caller& caller, const std::string& username);

  store::Store& store_;
  engine::Engine& engine_;
  engine::EventBus& events_;
  ApiOptions options_;
  util::SystemClock system_clock_;
  std::vector<std::unique_ptr<ReportCache>> node_reports_;  // the local node, then the remotes
  SpacesListCache spaces_list_;                             // GET /spaces
  CurrentStatsTexts stats_texts_;                           // its running spaces' "stats"
  SpaceOwners owners_;
  WebSessions sessions_;
  PreviewPasses previews_;
  std::shared_ptr<SsoFlows> sso_;
  std::unique_ptr<ConsoleHub> consoles_;
  std::unique_ptr<SocketWatch> sockets_;
  std::unique_ptr<AuditTrail> audit_;
  UserSlots socket_slots_;
  UserSlots stream_slots_;
  UserSlots slow_slots_;
  Router router_;
  std::atomic<std::uint64_t> requests_{0};
  std::atomic<std::uint64_t> failures_{0};  // 5xx answers
  std::atomic<int> stream_listeners_{0};
  // Event streams replaying stored events, each on a thread of its own (never an HTTP
  // worker's, whatever the client's pace); the destructor waits for them.
  std::mutex replays_mutex_;
  std::condition_variable replays_done_;
  int replays_ = 0;
};

// Raises HttpError 403 unless the caller is an admin.
void require_admin(const Caller& caller);
// Admins have every permission.
bool has_permission(const Caller& caller, store::Permission permission);

}  // namespace bowline::api
