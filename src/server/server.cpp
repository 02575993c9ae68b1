#include "server/server.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <mutex>
#include <set>

#include "api/api.hpp"
#include "api/http_server.hpp"
#include "api/routes_static.hpp"
#include "engine/engine.hpp"
#include "engine/event_kinds.hpp"
#include "engine/guest_address.hpp"
#include "engine/guest_guard.hpp"
#include "engine/kubevirt_node.hpp"
#include "engine/kvm_probe.hpp"
#include "engine/libvirt_node.hpp"
#include "engine/node_check.hpp"
#include "engine/traffic_filter.hpp"
#include "image/cache.hpp"
#include "image/overlay.hpp"
#include "kubevirt/curl_client.hpp"
#include "kubevirt/kubeconfig.hpp"
#include "libvirt/libvirt_hypervisor.hpp"
#include "server/backup.hpp"
#include "server/data_dir_lock.hpp"
#include "server/first_admin.hpp"
#include "server/listed_nodes.hpp"
#include "server/tls.hpp"
#include "spec/ipv4.hpp"
#include "spec/loader.hpp"
#include "sso/oidc.hpp"
#include "util/clock.hpp"
#include "util/hash.hpp"
#include "util/process.hpp"
#include "util/strings.hpp"

namespace bowline::server {

namespace fs = std::filesystem;

namespace {

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

void make_directory(const fs::path& dir, std::ostream& err) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    err << "bowline server: warning: cannot create " << dir.string() << ": " << ec.message()
        << " (node check will say what to do)\n";
}

// kvm or qemu, by the setting and (unless it is qemu) a probe domain; says what it chose.
engine::DomainTypeChoice decide_domain_type(const ServerSettings& settings,
                                            libvirt::Hypervisor& hypervisor, std::ostream& out,
                                            std::ostream& err) {
  // The probe's boot disk goes where spaces' disks go: QEMU can traverse it (node check says).
  engine::KvmProbeOptions options;
  options.work_dir = settings.images_path.string();
  engine::LibvirtKvmProbe probe(hypervisor, options);
  auto choice = engine::choose_domain_type(settings.domain_type, probe);  // throws KvmUnusable
  if (!choice.warning.empty()) err << "bowline server: warning: " << choice.warning << "\n";
  out << "bowline server: domain type " << plan::to_string(choice.type);
  if (choice.probed) out << " (" << choice.verdict.detail << ")";
  out << "\n";
  return choice;
}

image::CacheOptions cache_options_for(const ServerSettings& settings) {
  image::CacheOptions o;
  o.cloud_image_path = settings.cloud_image_path;
  o.base_image_path = settings.base_image_path;
  o.import_paths = settings.import_paths;
  o.download.max_size = settings.max_image_size;
  return o;
}

// Previews are served on the server's own port and scheme; logins go through server.url.
api::PreviewOptions preview_options(const ServerSettings& settings) {
  api::PreviewOptions o;
  o.domain = settings.preview_domain;
  const auto [address, port] = api::split_listen_address(settings.listen);
  o.https = plan_tls(settings).kind != TlsPlan::Kind::Off;
  o.port = port;
  o.ui_origin = settings.public_url;
  if (!o.ui_origin.empty()) {
    // Behind a TLS front end the previews share its scheme and port.
    o.https = o.ui_origin.rfind("https://", 0) == 0;
    const auto authority = o.ui_origin.substr(o.ui_origin.find("://") + 3);
    const auto colon = authority.rfind(':');
    o.port = colon != std::string::npos && authority.find(']', colon) == std::string::npos
                 ? static_cast<std::uint16_t>(std::stoi(authority.substr(colon + 1)))
                 : (o.https ? 443 : 80);
    return o;
  }
  const bool v6 = address.find(':') != std::string::npos;
  o.ui_origin = std::string(o.https ? "https://" : "http://") +
                (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
  return o;
}

// The provider's client, when single sign-on is set: its secret read from its file now.
api::SsoOptions sso_options(const ServerSettings& settings) {
  api::SsoOptions o;
  if (settings.sso_issuer.empty()) return o;
  if (settings.sso_client_id.empty() || settings.sso_client_secret_file.empty())
    throw std::runtime_error(
        "server.sso.issuer needs server.sso.client_id and server.sso.client_secret_file");
  std::ifstream file(settings.sso_client_secret_file);
  std::string secret;
  if (!file || !std::getline(file, secret) || util::trim(secret).empty())
    throw std::runtime_error("cannot read the client secret from " +
                             settings.sso_client_secret_file.string() +
                             " (server.sso.client_secret_file)");
  sso::ProviderSettings provider{settings.sso_issuer, settings.sso_client_id,
                                 std::string(util::trim(secret)), settings.sso_ca_file.string()};
  o.client = std::make_shared<sso::OidcClient>(provider, sso::curl_provider_http(provider));
  o.policy.username_claim = settings.sso_username_claim;
  o.policy.groups_claim = settings.sso_groups_claim;
  o.policy.admin_groups = {settings.sso_admin_groups.begin(), settings.sso_admin_groups.end()};
  o.policy.group_permissions = settings.sso_group_permissions;
  return o;
}

api::ApiOptions api_options_for(const ServerSettings& settings,
                                std::function<void(const std::string&)> log) {
  api::ApiOptions o;
  o.sessions.secure_cookie = settings.secure_cookies;
  o.sessions.trusted_proxies = settings.trusted_proxies;
  o.max_sockets_per_user = settings.max_sockets_per_user;
  o.max_streams_per_user = settings.max_streams_per_user;
  o.max_slow_requests_per_user = settings.max_slow_requests_per_user;
  o.log = std::move(log);
  o.max_import_size = settings.max_image_size;
  o.audit.retention = settings.audit_retention;
  o.audit.file = settings.audit_file;
  o.preview = preview_options(settings);
  o.sso = sso_options(settings);
  // `settings` outlive the Api (run_server's).
  o.backup = [&settings](const std::function<void(std::string_view)>& sink) {
    write_backup({settings.data_dir, describe_settings(settings), settings.config_file,
                  util::SystemClock().now_unix_ms()},
                 sink);
  };
  return o;
}

// What a server that stopped mid-way left under the images path goes before anything new.
void sweep_leftovers(engine::DiskFiles& files, std::ostream& out) {
  if (const auto swept = files.sweep_leftovers())
    out << "bowline server: removed " << swept
        << " half-made disk files left by an earlier server\n";
}

// One writer of log lines for the engine and the API, so their lines never interleave.
std::function<void(const std::string&)> line_writer(std::ostream& err) {
  return [&err, mutex = std::make_shared<std::mutex>()](const std::string& line) {
    std::lock_guard lock(*mutex);
    err << line << "\n" << std::flush;
  };
}

engine::EngineSettings engine_settings_for(const ServerSettings& settings) {
  engine::EngineSettings e;
  e.external_port_first = settings.external_port_first;
  e.external_port_last = settings.external_port_last;
  e.external_address = settings.external_address;
  e.reconcile_interval = settings.reconcile_interval;
  e.spool_dir = settings.data_dir / "moving";  // a move's files, between two nodes
  e.event_retention = settings.event_retention;
  e.operation_retention = settings.operation_retention;
  e.default_quota = settings.default_quota;
  e.stats.interval = settings.stats_interval;
  e.stats.history = settings.stats_history;
  e.idle.suspend_after = settings.idle_suspend_after;
  e.idle.cpu_percent = settings.idle_cpu_percent;
  e.pools_wait_suspended = settings.pools_wait_suspended;
  return e;
}

engine::LibvirtNodeSettings local_node_settings(const ServerSettings& settings,
                                                plan::DomainType domain_type) {
  engine::LibvirtNodeSettings n;
  n.node.domain_type = domain_type;
  n.node.images_path = settings.images_path.string();
  n.node.resolvers = settings.resolvers;
  n.node.server_url =
      (plan_tls(settings).kind == TlsPlan::Kind::Off ? "http://" : "https://") + settings.listen;
  n.stop_timeout = settings.stop_timeout;
  n.trim_guest_cache = settings.idle_trim_guest_cache;
  n.dedicated_cpus = settings.dedicated_cpus;
  return n;
}

// bowline's guest guard where libvirt is on this host (server.kvm.guest_filter), loaded with
// the domains libvirt has and learning leases; null where libvirt's nwfilter filters.
std::unique_ptr<engine::GuestGuard> make_guest_guard(const ServerSettings& settings,
                                                     util::ProcessRunner& runner,
                                                     const util::Clock& clock,
                                                     libvirt::Hypervisor& hypervisor,
                                                     engine::EventBus& events, std::ostream& err) {
  const auto filter = to_string(settings.guest_filter);
  if (!engine::guarded_by_bowline(settings.libvirt_uri, filter)) {
    if (settings.guest_filter == GuestFilter::Guard &&
        !engine::is_test_driver(settings.libvirt_uri))
      throw SettingsError("server.kvm.guest_filter guard needs libvirt on this host, and " +
                          settings.libvirt_uri + " is elsewhere: use nwfilter (or auto)");
    if (const auto why = engine::nwfilter_fallback_reason(settings.libvirt_uri, filter);
        !why.empty())
      err << "bowline server: notice: " << why
          << " (run as root or with CAP_NET_ADMIN for bowline's guard)\n";
    return nullptr;
  }
  if (settings.guest_filter == GuestFilter::Guard && !engine::may_manage_nftables())
    throw SettingsError(
        "server.kvm.guest_filter guard needs root or CAP_NET_ADMIN to write nftables rules, "
        "and bowline runs as uid " +
        std::to_string(::geteuid()) +
        " without it: run it as root, grant CAP_NET_ADMIN (AmbientCapabilities=CAP_NET_ADMIN in "
        "its unit), or set guest_filter auto or nwfilter to use libvirt's nwfilter");
  engine::GuestGuardOptions options;
  options.dir = settings.data_dir;
  options.tag = engine::guard_tag_in(settings.data_dir, runner);
  // Put back within a poll when the host's ruleset was flushed; admins see it as an event.
  options.on_restored = [&events, table = "bridge bowline_" + options.tag](const std::string& why) {
    events.publish(engine::event::kFirewallRestored, std::nullopt,
                   {{"table", table}, {"reason", why}});
  };
  auto guard = std::make_unique<engine::GuestGuard>(
      runner, clock, [&hypervisor] { return hypervisor.dhcp_leases(); }, options);
  std::set<std::string> domains;
  for (const auto& d : hypervisor.list()) domains.insert(d.name);
  try {
    guard->load(domains);
  } catch (const std::exception& e) {
    // Spaces then fail to start with the same words (nothing runs unfiltered); node check
    // says what the host needs.
    err << "bowline server: warning: the guest guard is not in place: " << e.what() << "\n";
  }
  guard->watch_leases();
  return guard;
}

// The KubeVirt node, when one is named: its kubeconfig is read once, here.
struct KubevirtWiring {
  std::unique_ptr<kubevirt::CurlKubeClient> client;
  std::unique_ptr<engine::KubevirtNode> node;
};

KubevirtWiring make_kubevirt_node(const ServerSettings& settings, std::ostream& out) {
  KubevirtWiring wiring;
  if (settings.kubevirt_name.empty()) return wiring;
  const auto path = settings.kubevirt_kubeconfig.empty() ? kubevirt::default_kubeconfig_path()
                                                         : settings.kubevirt_kubeconfig.string();
  auto connection = kubevirt::load_kubeconfig(path, settings.kubevirt_context);
  const auto server = connection.server;
  wiring.client =
      std::make_unique<kubevirt::CurlKubeClient>(std::move(connection), std::chrono::seconds(30));
  engine::KubevirtNodeOptions options{settings.kubevirt_name, settings.kubevirt_namespace, server};
  options.settle_timeout = settings.stop_timeout;
  wiring.node = std::make_unique<engine::KubevirtNode>(*wiring.client, options);
  out << "bowline server: kubevirt node " << settings.kubevirt_name << " at " << server
      << ", namespace " << settings.kubevirt_namespace << "\n";
  return wiring;
}

// This node's report for GET /api/v1/nodes, against the templates stored now. The KVM verdict
// is the start-up probe's: a report never starts QEMU.
struct NodeReporter {
  const ServerSettings& settings;
  const engine::DomainTypeChoice& choice;
  store::Store& store;
  libvirt::Hypervisor& hypervisor;
  const engine::HostProbe& host;
  util::ProcessRunner& runner;
  const engine::GuestGuard* guard;

  nlohmann::json operator()() const {
    engine::NodeCheckOptions options;
    options.domain_type = engine::to_string(settings.domain_type);
    options.images_path = settings.images_path.string();
    options.cloud_image_path = settings.cloud_image_path.string();
    options.base_image_path = settings.base_image_path.string();
    options.guest_filter = to_string(settings.guest_filter);
    if (guard) options.guard_table = guard->scripts().table();
    for (const auto& t : store.templates().list())
      if (auto loaded = spec::load_spec(t.yaml, nullptr); loaded.spec)
        options.requirements.add(*loaded.spec);
    engine::NodeCheckContext context;
    context.hypervisor = &hypervisor;
    context.uri = settings.libvirt_uri;
    context.host = &host;
    context.runner = &runner;
    if (choice.probed) context.kvm = &choice.verdict;
    return nlohmann::json::parse(engine::to_json(engine::check_node(options, context)).dump());
  }
};

// Every connection, console and tunnel is a descriptor (a tunnel two): the soft limit of 1024
// would refuse clients long before max_connections; the hard limit is the operator's word.
void raise_open_files_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
  }
}

// The HTTP server's options: the listen address, and HTTPS as the settings say (a self-signed
// certificate made now if need be), announced on `out`.
api::HttpServerOptions http_options(const ServerSettings& settings, std::ostream& out,
                                    std::ostream& err) {
  const auto [address, port] = api::split_listen_address(settings.listen);
  api::HttpServerOptions options;
  options.address = address;
  options.port = port;
  options.max_connections = settings.max_connections;
  options.max_connections_per_address = settings.max_connections_per_address;
  const auto plan = plan_tls(settings);
  if (const auto tls = prepare_tls(settings, plan)) {
    options.tls = api::TlsFiles{tls->cert.string(), tls->key.string()};
    out << "bowline server: " << describe_ready(*tls) << "\n";
    if (const auto preview = prepare_preview_tls(settings, plan)) {
      options.host_tls.push_back(
          {"." + settings.preview_domain, {preview->cert.string(), preview->key.string()}});
      out << "bowline server: previews' " << describe_ready(*preview) << "\n";
    }
  } else if (!is_loopback_address(address)) {
    err << "bowline server: warning: plain HTTP on " << settings.listen << " (" << plan.reason
        << "): tokens, passwords and consoles cross the network in the clear unless a TLS "
           "front end is in between\n";
  }
  if (!settings.preview_domain.empty())
    options.header_only = [suffix = "." + settings.preview_domain](std::string_view host) {
      return host.size() > suffix.size() && host.ends_with(suffix);
    };
  return options;
}

// The database holds password hashes: a directory we make is ours alone.
void make_data_dir(const fs::path& dir) {
  if (fs::create_directories(dir))
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
}

std::string listening_url(const api::HttpServerOptions& options, unsigned short port) {
  const auto& address = options.address;
  return std::string(options.tls ? "https://" : "http://") +
         (address.find(':') != std::string::npos ? "[" + address + "]" : address) + ":" +
         std::to_string(port);
}

void wait_for_stop_signal(std::ostream& out) {
  const auto set = stop_signals();
  int signal_number = 0;
  while (sigwait(&set, &signal_number) != 0) {
  }
  out << "bowline server: " << (signal_number == SIGINT ? "SIGINT" : "SIGTERM") << ": stopping\n"
      << std::flush;
}

}  // namespace

void block_stop_signals() {
  const auto set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

int run_server(const ServerSettings& settings, std::ostream& out, std::ostream& err,
               bool out_is_terminal) {
  try {
    raise_open_files_limit();
    make_data_dir(settings.data_dir);
    const DataDirLock one_server(settings.data_dir);
    util::SystemClock clock;
    store::Store store(settings.data_dir / "bowline.db", clock);
    announce_first_admin(store, settings.data_dir / "admin.token", out, out_is_terminal);
    const auto server_options = http_options(settings, out, err);  // HTTPS's files first
    for (const auto& dir :
         {settings.images_path, settings.cloud_image_path, settings.base_image_path})
      make_directory(dir, err);

    libvirt::LibvirtHypervisor hypervisor(libvirt::LibvirtOptions{settings.libvirt_uri});
    const auto choice = decide_domain_type(settings, hypervisor, out, err);
    image::ImageCache images(cache_options_for(settings));
    util::SystemProcessRunner runner;
    image::Disks disks(runner);
    engine::SysfsHostProbe host;
    engine::EventBus events(store);
    // Made before the engine, so that it outlives the engine's background work.
    const auto kubevirt = make_kubevirt_node(settings, out);
    engine::NftPortForwarder forwarder(runner, settings.data_dir.string(),
                                       settings.external_address);
    const auto guard = make_guest_guard(settings, runner, clock, hypervisor, events, err);
    auto local_settings = local_node_settings(settings, choice.type);
    local_settings.guard = guard.get();
    if (guard) local_settings.node.guard_tag = guard->scripts().tag();
    local_settings.report =
        NodeReporter{settings, choice, store, hypervisor, host, runner, guard.get()};
    engine::LibvirtNode local(hypervisor, images, disks, host, std::move(local_settings));
    // server.nodes: hosts elsewhere, on the local probe's domain type (the operator matches it).
    const auto listed =
        make_listed_nodes(settings, local_node_settings(settings, choice.type), images, disks, out);
    const auto log = line_writer(err);
    auto engine_settings = engine_settings_for(settings);
    engine_settings.log = log;
    engine::Engine engine(store, events, engine_settings);
    engine.add_node(local);  // the first: the default node
    for (const auto& n : listed) engine.add_node(*n.node);
    if (kubevirt.node) engine.add_node(*kubevirt.node);
    // No address set aside for guests' ports: none is published (settings.hpp says why).
    if (!settings.external_address.empty()) engine.set_port_forwarder(forwarder);
    if (const auto a = spec::Ipv4Address::parse(settings.external_address);
        a && !engine::host_ipv4_addresses().count(a->value))
      err << "bowline server: warning: server.external_address " << settings.external_address
          << " is not an address of this host (yet): external ports answer once it is\n";
    engine::DiskFiles disk_files(settings.images_path, images, disks);
    sweep_leftovers(disk_files, out);
    engine.set_disk_files(disk_files);
    engine.start();  // watches the nodes' events and reconciles

    api::Api api(store, engine, events, api_options_for(settings, log));

    api::StaticFiles web(settings.web_root);
    web.add_generated("/ui/event-kinds.js", api::event_kinds_module(),
                      "text/javascript; charset=utf-8");
    api::HttpServer server(server_options, [&api, &web](api::Request& request) {
      // A preview host is the guest's, all of it: the UI's files are never served there.
      const bool ui = api::StaticFiles::handles(request.path) && !api.is_preview_request(request);
      return ui ? web.handle(request) : api.handle(request);
    });
    server.start();
    api.listening_on(server.port());  // port 0 in the settings: the previews' is known now
    out << "bowline server listening on " << listening_url(server_options, server.port())
        << " (data in " << settings.data_dir.string() << ", libvirt " << settings.libvirt_uri
        << ")\n"
        << std::flush;

    wait_for_stop_signal(out);
    server.stop();
    engine.wait_idle();
    out << "bowline server: stopped\n" << std::flush;
    return 0;
  } catch (const std::exception& e) {
    err << "bowline server: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace bowline::server
