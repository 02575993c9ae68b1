#include "api/server.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "api/api.hpp"
#include "api/auth.hpp"
#include "api/http_server.hpp"
#include "api/routes_static.hpp"
#include "engine/engine.hpp"
#include "engine/kubevirt_node.hpp"
#include "engine/node_check.hpp"
#include "image/cache.hpp"
#include "image/overlay.hpp"
#include "kubevirt/curl_client.hpp"
#include "kubevirt/kubeconfig.hpp"
#include "libvirt/libvirt_hypervisor.hpp"
#include "spec/loader.hpp"
#include "util/clock.hpp"
#include "util/process.hpp"

namespace bowline::api {

namespace fs = std::filesystem;

namespace {

void write_secret(const fs::path& file, const std::string& text) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    throw std::runtime_error("cannot write " + file.string() + ": " + std::strerror(errno));
  ::fchmod(fd, 0600);  // an older file may have had other bits
  const std::string line = text + "\n";
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot write " + file.string());
}

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

}  // namespace

std::optional<std::string> bootstrap_admin(store::Store& store, const fs::path& token_file) {
  std::string token;
  {
    auto transaction = store.transaction();
    if (store.users().count() != 0) return std::nullopt;
    store::NewUser admin;
    admin.username = "admin";
    admin.permissions = {store::Permission::Admin};
    const auto user = store.users().create(admin);
    token = issue_token(store, user.id, "first admin token");
    transaction.commit();
  }
  write_secret(token_file, token);
  return token;
}

void block_stop_signals() {
  const auto set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
}

int run_server(const ServerSettings& settings, std::ostream& out, std::ostream& err,
               bool out_is_terminal) {
  try {
    // The database holds service passwords: a directory we make is ours alone.
    if (fs::create_directories(settings.data_dir))
      fs::permissions(settings.data_dir, fs::perms::owner_all, fs::perm_options::replace);
    util::SystemClock clock;
    store::Store store(settings.data_dir / "bowline.db", clock);
    const auto token_file = settings.data_dir / "admin.token";
    if (auto token = bootstrap_admin(store, token_file)) {
      if (out_is_terminal)
        out << "First start: created the admin user \"admin\". Its API token, shown once:\n\n  "
            << *token << "\n\n(also in " << token_file.string()
            << ", readable only by this user; delete it once you have kept the token)\n";
      else
        out << "First start: created the admin user \"admin\". Its API token is in "
            << token_file.string()
            << " (readable only by this user; not printed here, since this output is not a "
               "terminal and may be logged). Keep it, then delete the file.\n";
    }
    make_directory(settings.images_path, err);
    make_directory(settings.cloud_image_path, err);
    make_directory(settings.base_image_path, err);

    libvirt::LibvirtOptions libvirt_options;
    libvirt_options.uri = settings.libvirt_uri;
    libvirt::LibvirtHypervisor hypervisor(libvirt_options);
    image::CacheOptions cache_options;
    cache_options.cloud_image_path = settings.cloud_image_path;
    cache_options.base_image_path = settings.base_image_path;
    image::ImageCache images(cache_options);
    util::SystemProcessRunner runner;
    image::Disks disks(runner);
    engine::SysfsHostProbe host;
    engine::EventBus events(store);

    engine::EngineSettings engine_settings;
    engine_settings.node.domain_type = settings.domain_type;
    engine_settings.node.images_path = settings.images_path.string();
    engine_settings.node.resolvers = settings.resolvers;
    engine_settings.node.server_url = "http://" + settings.listen;
    engine_settings.stop_timeout = settings.stop_timeout;
    engine_settings.reconcile_interval = settings.reconcile_interval;
    // The KubeVirt node, when one is named: its kubeconfig is read once, here. Made before
    // the engine, so that it outlives the engine's background work.
    std::unique_ptr<kubevirt::CurlKubeClient> kube_client;
    std::unique_ptr<engine::KubevirtNode> kubevirt_node;
    if (!settings.kubevirt_name.empty()) {
      const auto path = settings.kubevirt_kubeconfig.empty()
                            ? kubevirt::default_kubeconfig_path()
                            : settings.kubevirt_kubeconfig.string();
      auto connection = kubevirt::load_kubeconfig(path, settings.kubevirt_context);
      const auto server = connection.server;
      kube_client = std::make_unique<kubevirt::CurlKubeClient>(std::move(connection),
                                                               std::chrono::seconds(30));
      kubevirt_node = std::make_unique<engine::KubevirtNode>(
          *kube_client,
          engine::KubevirtNodeOptions{settings.kubevirt_name, settings.kubevirt_namespace, server});
      out << "bowline server: kubevirt node " << settings.kubevirt_name << " at " << server
          << ", namespace " << settings.kubevirt_namespace << "\n";
    }
    engine::Engine engine(store, hypervisor, images, disks, host, events, engine_settings);
    if (kubevirt_node) engine.add_node(*kubevirt_node);
    engine.start();  // subscribes to libvirt's events and reconciles

    ApiOptions api_options;
    api_options.node = [&] {
      engine::NodeCheckOptions options;
      options.domain_type = plan::to_string(settings.domain_type);
      options.images_path = settings.images_path.string();
      for (const auto& t : store.templates().list())
        if (auto loaded = spec::load_spec(t.yaml, nullptr); loaded.spec)
          options.requirements.add(*loaded.spec);
      engine::NodeCheckContext context;
      context.hypervisor = &hypervisor;
      context.uri = settings.libvirt_uri;
      context.host = &host;
      context.runner = &runner;
      return nlohmann::json::parse(engine::to_json(engine::check_node(options, context)).dump());
    };
    api_options.hypervisor = &hypervisor;  // the console and VNC WebSockets
    api_options.sessions.secure_cookie = settings.secure_cookies;
    if (kubevirt_node) api_options.remote_nodes.push_back(kubevirt_node.get());
    Api api(store, engine, events, api_options);

    const auto [address, port] = split_listen_address(settings.listen);
    HttpServerOptions server_options;
    server_options.address = address;
    server_options.port = port;
    const StaticFiles web(settings.web_root);
    HttpServer server(server_options, [&api, &web](Request& request) {
      return StaticFiles::handles(request.path) ? web.handle(request) : api.handle(request);
    });
    server.start();
    out << "bowline server listening on http://"
        << (address.find(':') != std::string::npos ? "[" + address + "]" : address) << ":"
        << server.port() << " (data in " << settings.data_dir.string() << ", libvirt "
        << settings.libvirt_uri << ")\n"
        << std::flush;

    const auto set = stop_signals();
    int signal_number = 0;
    while (sigwait(&set, &signal_number) != 0) {
    }
    out << "bowline server: " << (signal_number == SIGINT ? "SIGINT" : "SIGTERM") << ": stopping\n"
        << std::flush;
    server.stop();
    engine.wait_idle();
    out << "bowline server: stopped\n" << std::flush;
    return 0;
  } catch (const std::exception& e) {
    err << "bowline server: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace bowline::api
