// The table of the server's settings: one row per setting with every spelling (config file
// key, flag, environment variable, knot's), its default, what it is, how its text becomes a
// value and how --print-config shows it. Parsing (settings.cpp), --print-config and
// docs/configuration.md's table (settings_describe.cpp) all read it; settings_doc_test checks
// the doc against it.
#include <tuple>

#include "server/settings_value.hpp"
#include "spec/quantity.hpp"

namespace bowline::server {

// Data written as code: a row per setting, in the order --print-config and the docs show them.
const std::vector<Setting>& setting_table() {
  static const std::vector<Setting> table = with_team_settings({
      {.key = "server.listen",
       .type = "address",
       .flag = "--listen",
       .env = "BOWLINE_LISTEN",
       .default_value = "127.0.0.1:7470",
       .summary = "address and port of the HTTP API",
       .details = "address and port of the HTTP API: `ADDRESS:PORT`, or `[ADDRESS]:PORT` for "
                  "IPv6. The address must be an IP address, not a host name. Port `0` takes any "
                  "free port (the server prints the one it got)",
       .set = [](auto& s, const auto& v) { s.listen = parse::listen_address(v); },
       .show = [](const auto& s) { return s.listen; }},
      {.key = "server.tls.cert",
       .type = "path",
       .flag = "--tls-cert",
       .env = "BOWLINE_TLS_CERT",
       .default_value = "",
       .default_doc = "none",
       .summary = "serve HTTPS with this PEM certificate (chain); needs server.tls.key",
       .details = "serve HTTPS and WSS only, with this PEM certificate (the server's first, any "
                  "intermediates after it). Needs `server.tls.key`; neither: see "
                  "`server.tls.mode`. Read at start: replace the files and restart to rotate "
                  "([tls.md](tls.md))",
       .set = [](auto& s, const auto& v) { s.tls_cert = parse::path(v); },
       .show = [](const auto& s) { return show::path_or(s.tls_cert, "(none)"); }},
      {.key = "server.tls.key",
       .type = "path",
       .flag = "--tls-key",
       .env = "BOWLINE_TLS_KEY",
       .default_value = "",
       .default_doc = "none",
       .summary = "the PEM private key of server.tls.cert",
       .details = "the certificate's PEM private key (keep it 0600)",
       .set = [](auto& s, const auto& v) { s.tls_key = parse::path(v); },
       .show = [](const auto& s) { return show::path_or(s.tls_key, "(none)"); }},
      {.key = "server.tls.mode",
       .type = "word",
       .flag = "--tls-mode",
       .env = "BOWLINE_TLS_MODE",
       .default_value = "auto",
       .summary = "without a certificate: auto (a self-signed one, made in the data directory, "
                  "when the listen address is not loopback), self-signed (also on loopback) or "
                  "off (plain HTTP)",
       .details = "what the server does without a certificate given. `auto`: on a loopback "
                  "listen address (`127.0.0.0/8`, `::1`) plain HTTP; on any other address HTTPS "
                  "with a self-signed certificate that it makes in the data directory at the "
                  "first start (`tls-cert.pem`, and `tls-key.pem` mode 0600) and keeps using. "
                  "`self-signed`: that certificate on loopback too. `off`: plain HTTP on any "
                  "address, with a warning at start, for a TLS front end (reverse proxy) in "
                  "front. With a certificate given only `auto` is allowed",
       .set = [](auto& s, const auto& v) { s.tls_mode = parse::tls_mode(v); },
       .show = [](const auto& s) { return std::string(to_string(s.tls_mode)); }},
      {.key = "server.data_dir",
       .type = "path",
       .flag = "--data-dir",
       .env = "BOWLINE_DATA_DIR",
       .default_value = "/var/lib/bowline",
       .summary = "where the database lives",
       .details = "the SQLite database (`bowline.db`) and, after the first start, `admin.token`. "
                  "A directory the server makes is made mode 0700",
       .set = [](auto& s, const auto& v) { s.data_dir = parse::path(v); },
       .show = [](const auto& s) { return s.data_dir.string(); }},
      {.key = "server.libvirt_uri",
       .type = "URI",
       .flag = "--libvirt-uri",
       .env = "BOWLINE_LIBVIRT_URI",
       .default_value = "qemu:///system",
       .summary = "libvirt connection URI",
       .details = "the libvirt connection",
       .set = [](auto& s, const auto& v) { s.libvirt_uri = parse::libvirt_uri(v); },
       .show = [](const auto& s) { return s.libvirt_uri; }},
      {.key = "server.nodes",
       .type = "list of nodes",
       .flag = "--nodes",
       .env = "BOWLINE_NODES",
       .default_value = "",
       .default_doc = "empty (only the node `local` of server.libvirt_uri)",
       .summary = "more libvirt hosts as nodes: YAML mappings with name, uri, images_path, ...",
       .details = "more hosts as nodes beside `local` (the node server.libvirt_uri and "
                  "server.kvm.images_path describe): a list of mappings, each with `name`, "
                  "`kind` (libvirt), `uri` (`qemu+ssh://` or `qemu+tls://`), `images_path`, "
                  "`pool`, `networks`, `bridges`, `labels`, `reserve` (`memory`, `cpus`), "
                  "`ssh_host_key` and `ssh_key`; "
                  "in a flag or the environment as YAML flow text "
                  "([nodes.md](nodes.md#more-hosts-servernodes))",
       .set = [](auto& s, const auto& v) { s.nodes = parse::nodes(v); },
       .show = [](const auto& s) { return show_nodes(s.nodes); }},
      {.key = "server.domain_type",
       .type = "word",
       .flag = "--domain-type",
       .env = "BOWLINE_DOMAIN_TYPE",
       .default_value = "auto",
       .summary = "auto (kvm when a KVM guest really runs here, else qemu with a warning), kvm "
                  "(hardware virtualisation, refused at start where it does not run) or qemu "
                  "(software emulation)",
       .details = "how QEMU runs guests. `auto`: at start-up the server boots a throwaway KVM "
                  "guest (bowline's probe program, well under a second); if it reaches long "
                  "mode, spaces use `kvm`, otherwise `qemu`, with a warning. `kvm`: hardware "
                  "virtualisation; the server refuses to start where a KVM guest does not run. "
                  "`qemu`: software emulation, much slower, and no test guest at start-up. Upper "
                  "or lower case. See [nodes.md](nodes.md#domain-type-auto-kvm-or-qemu)",
       .set = [](auto& s, const auto& v) { s.domain_type = parse::domain_type(v); },
       .show = [](const auto& s) { return std::string(engine::to_string(s.domain_type)); }},
      {.key = "server.stop_timeout",
       .type = "duration",
       .flag = "--stop-timeout",
       .env = "BOWLINE_STOP_TIMEOUT",
       .default_value = "60s",
       .summary = "how long a stop waits for the guest before forcing it off (60, 90s, 2m)",
       .details = "how long a stop waits after the ACPI shutdown request before it forces the "
                  "domain off",
       .set = [](auto& s, const auto& v) { s.stop_timeout = parse::duration(v); },
       .show = [](const auto& s) { return show::seconds(s.stop_timeout); }},
      {.key = "server.reconcile_interval",
       .type = "duration",
       .flag = "--reconcile-interval",
       .env = "BOWLINE_RECONCILE_INTERVAL",
       .default_value = "60s",
       .summary = "how often the store is compared with libvirt (0: only at start-up)",
       .details = "how often the store is compared with libvirt after the pass at start-up; `0` "
                  "means only at start-up",
       .set = [](auto& s, const auto& v) { s.reconcile_interval = parse::duration(v, true); },
       .show = [](const auto& s) { return show::seconds(s.reconcile_interval); }},
      {.key = "server.kvm.images_path",
       .type = "path",
       .flag = "--images-path",
       .env = "BOWLINE_KVM_IMAGES_PATH",
       .knot_flag = "--kvm-images-path",
       .knot_env = "KNOT_KVM_IMAGES_PATH",
       .default_value = "/var/lib/libvirt/images/bowline",
       .summary = "one directory per space (disk, seed, console log)",
       .details = "one directory per space, named after its domain: the disk overlay, the "
                  "cloud-init seed and the serial console log",
       .set = [](auto& s, const auto& v) { s.images_path = parse::path(v); },
       .show = [](const auto& s) { return s.images_path.string(); }},
      {.key = "server.kvm.cloud_image_path",
       .type = "path",
       .flag = "--cloud-image-path",
       .env = "BOWLINE_KVM_CLOUD_IMAGE_PATH",
       .knot_flag = "--kvm-cloud-image-path",
       .knot_env = "KNOT_KVM_CLOUD_IMAGE_PATH",
       .default_value = "",
       .default_doc = "`<images_path>/cloud-images`",
       .summary = "the library that bare image names resolve in",
       .details = "the library where a template's bare image name (`image: debian-12`) is looked "
                  "up, as `debian-12` or `debian-12.qcow2`",
       .set = [](auto& s, const auto& v) { s.cloud_image_path = parse::path(v); },
       .show = [](const auto& s) { return s.cloud_image_path.string(); }},
      {.key = "server.kvm.base_image_path",
       .type = "path",
       .flag = "--base-image-path",
       .env = "BOWLINE_KVM_BASE_IMAGE_PATH",
       .knot_flag = "--kvm-base-image-path",
       .knot_env = "KNOT_KVM_BASE_IMAGE_PATH",
       .default_value = "",
       .default_doc = "`<images_path>/base`",
       .summary = "where downloaded images are cached",
       .details = "where images that templates name by URL are downloaded and kept "
                  "([templates.md](templates.md#images-from-an-url))",
       .set = [](auto& s, const auto& v) { s.base_image_path = parse::path(v); },
       .show = [](const auto& s) { return s.base_image_path.string(); }},
      {.key = "server.kvm.import_paths",
       .type = "paths",
       .flag = "--import-paths",
       .env = "BOWLINE_KVM_IMPORT_PATHS",
       .default_value = "",
       .default_doc = "empty (none)",
       .summary = "directories (comma-separated) under which an admin may name an image by its "
                  "path; empty, the default: no image is named by path",
       .details = "directories (comma-separated) under which an image may be named by its host "
                  "path: in a template's `image:`, or an admin's `disk create --image PATH`. "
                  "Users never name paths. Empty: no image is taken by path. `/` is refused. A "
                  "path outside these directories, missing, unreadable or not a standalone qcow2 "
                  "gets one answer that names no file ([security.md](security.md#images))",
       .set = [](auto& s, const auto& v) { s.import_paths = parse::import_paths(v); },
       .show =
           [](const auto& s) {
             return show::list(s.import_paths, [](const auto& p) { return p.string(); });
           }},
      {.key = "server.kvm.max_image_size",
       .type = "size",
       .flag = "--max-image-size",
       .env = "BOWLINE_KVM_MAX_IMAGE_SIZE",
       .default_value = "64G",
       .summary = "the largest image a template's URL may download (64G, 512M)",
       .details = "the largest image a template's URL may download. A server that announces more "
                  "is refused before a byte is written; a body that grows past it (no or a wrong "
                  "`Content-Length`) is cut off and the partial file removed. The error gives "
                  "the size and the limit and names this setting",
       .set = [](auto& s, const auto& v) { s.max_image_size = parse::image_size(v); },
       .show = [](const auto& s) { return spec::format_binary_size(s.max_image_size); }},
      {.key = "server.kvm.resolvers",
       .type = "addresses",
       .flag = "--resolvers",
       .env = "BOWLINE_KVM_RESOLVERS",
       .knot_flag = "--kvm-resolvers",
       .knot_env = "KNOT_KVM_RESOLVERS",
       .default_value = "1.1.1.1,1.0.0.1",
       .summary = "DNS servers for bridged guests (comma-separated)",
       .details = "DNS servers written into the network configuration of bridged spaces (NAT "
                  "spaces get theirs from DHCP)",
       .set = [](auto& s, const auto& v) { s.resolvers = parse::resolvers(v); },
       .show =
           [](const auto& s) { return show::list(s.resolvers, [](const auto& r) { return r; }); }},
      {.key = "server.kvm.dedicated_cpus",
       .type = "CPU list",
       .flag = "--dedicated-cpus",
       .env = "BOWLINE_KVM_DEDICATED_CPUS",
       .default_value = "",
       .default_doc = "empty (none)",
       .summary = "host CPUs (e.g. 4-15) set aside for spaces whose instance type dedicates CPUs "
                  "(pinned vCPUs and emulator thread); empty: none",
       .details = "host CPUs set aside for spaces whose instance type dedicates CPUs (cx1, d1, "
                  "n1, rt1): a CPU list such as `4-15` or `2,3,8-11`. At each start such a space "
                  "takes free CPUs from it for its vCPUs and its emulator thread. Empty: those "
                  "spaces run unpinned. See "
                  "[templates.md](templates.md#what-an-instance-types-traits-do-on-libvirt)",
       .set = [](auto& s, const auto& v) { s.dedicated_cpus = parse::cpu_list(v); },
       .show =
           [](const auto& s) {
             return show::list(s.dedicated_cpus, [](auto c) { return std::to_string(c); });
           }},
      {.key = "server.kvm.guest_filter",
       .type = "word",
       .flag = "--guest-filter",
       .env = "BOWLINE_KVM_GUEST_FILTER",
       .default_value = "auto",
       .summary = "what stops guests spoofing MACs, addresses, ARP and DHCP: auto (bowline's "
                  "nftables guard when libvirt is on this host and bowline may write nftables "
                  "rules, else libvirt's nwfilter), guard or nwfilter",
       .details = "what stops guests spoofing MACs, addresses, ARP and DHCP: `auto` (bowline's "
                  "[guest guard](networking.md#the-guest-guard), nftables rules written once per "
                  "domain, where libvirt is on this host and bowline runs as root or with "
                  "CAP_NET_ADMIN; libvirt's nwfilter for a libvirt elsewhere or for a bowline "
                  "without them, such as an ordinary user in the libvirt group, which the log and "
                  "`node check` then say), `guard` (refused at start without root or "
                  "CAP_NET_ADMIN) or `nwfilter`. The guard keeps `guest-guard.tag`, "
                  "`guest-guard.json` and `guest-guard.nft` in the data directory",
       .set = [](auto& s, const auto& v) { s.guest_filter = parse::guest_filter(v); },
       .show = [](const auto& s) { return std::string(to_string(s.guest_filter)); }},
      {.key = "server.external_ports",
       .type = "port range",
       .flag = "--external-ports",
       .env = "BOWLINE_EXTERNAL_PORTS",
       .default_value = "20000-29999",
       .summary = "host ports (FIRST-LAST) that publish the guest ports of NAT spaces with "
                  "external: true",
       .details = "host ports (`FIRST-LAST`) that publish the `externalPorts` of NAT spaces with "
                  "`external: true`. A space takes the lowest free ones when it is created and "
                  "keeps them for its life. See "
                  "[networking.md](networking.md#external-ports-of-nat-spaces)",
       .set =
           [](auto& s, const auto& v) {
             std::tie(s.external_port_first, s.external_port_last) = parse::port_range(v);
           },
       .show =
           [](const auto& s) {
             return std::to_string(s.external_port_first) + "-" +
                    std::to_string(s.external_port_last);
           }},
      {.key = "server.external_address",
       .type = "address",
       .flag = "--external-address",
       .env = "BOWLINE_EXTERNAL_ADDRESS",
       .default_value = "",
       .default_doc = "(none)",
       .summary = "the IPv4 address of this host those ports are published on, one the web UI is "
                  "not reached by (its cookies would reach the guests); any: every address but "
                  "loopback; empty, the default: no port is published",
       .details = "the IPv4 address of this host that those ports are published on. Pick one the "
                  "web UI is not reached by: a browser sends a host's cookies to every port of "
                  "it, so a guest's port on the UI's address would receive the UI's session "
                  "cookie. `any` publishes on every address of the host but loopback (when the "
                  "UI is reached by a name of its own). Unset, no port is published and a space "
                  "with external ports fails to start, saying so. Equal to the address of "
                  "`server.listen`: the server refuses to start",
       .set = [](auto& s, const auto& v) { s.external_address = parse::external_address(v); },
       .show =
           [](const auto& s) {
             return s.external_address.empty() ? std::string("(none: no port is published)")
                                               : s.external_address;
           }},
      {.key = "server.web_root",
       .type = "path",
       .flag = "--web-root",
       .env = "BOWLINE_WEB_ROOT",
       .default_value = "",
       .default_doc = "the source tree's `web/` (set when bowline is built)",
       .summary = "the web UI's files (ui/ and node_modules/ from npm ci)",
       .details = "the web UI's files",
       .set = [](auto& s, const auto& v) { s.web_root = parse::path(v); },
       .show = [](const auto& s) { return s.web_root.string(); }},
      {.key = "server.secure_cookies",
       .type = "word",
       .flag = "--secure-cookies",
       .env = "BOWLINE_SECURE_COOKIES",
       .default_value = "auto",
       .summary = "the session cookie's Secure flag: auto (when the browser came over HTTPS), "
                  "true, false",
       .details = "the `Secure` attribute of the browser's session cookie when bowline speaks "
                  "plain HTTP (over bowline's own HTTPS the cookie is always `Secure`). `auto`: "
                  "`Secure` when the browser came over HTTPS to a TLS front end (reverse proxy), "
                  "as the front end says (`X-Forwarded-Proto: https` or `Forwarded: "
                  "proto=https`, first hop) or the page's own `Origin: https://…` does; `true`: "
                  "always (set it behind HTTPS to rely on nothing the request says; browsers "
                  "then keep the cookie only over HTTPS or on `localhost`); `false`: never",
       .set = [](auto& s, const auto& v) { s.secure_cookies = parse::secure_cookies(v); },
       .show =
           [](const auto& s) {
             return s.secure_cookies ? show::boolean(*s.secure_cookies) : std::string("auto");
           }},
      {.key = "server.limits.connections",
       .type = "count",
       .flag = "--max-connections",
       .env = "BOWLINE_MAX_CONNECTIONS",
       .default_value = "8192",
       .summary = "open connections (event streams and WebSockets included) beyond which new "
                  "ones are closed at once",
       .details = "open connections in all (event streams and WebSockets included); beyond it a "
                  "new connection is closed at once while the open ones go on being served. The "
                  "server raises its open-files limit to the hard limit at start; keep this well "
                  "under it",
       .set = [](auto& s, const auto& v) { s.max_connections = parse::count(v, 1'000'000); },
       .show = [](const auto& s) { return std::to_string(s.max_connections); }},
      {.key = "server.limits.sockets_per_user",
       .type = "count",
       .flag = "--max-sockets-per-user",
       .env = "BOWLINE_MAX_SOCKETS_PER_USER",
       .default_value = "64",
       .summary = "WebSockets (consoles, displays, terminals, tunnels) one user may hold open at "
                  "once",
       .details = "WebSockets into spaces (consoles, displays, terminals, tunnels: each `ssh` "
                  "and each connection of a `forward` is one) one user may hold open; the next "
                  "is refused with 429 saying so",
       .set = [](auto& s, const auto& v) { s.max_sockets_per_user = parse::count(v, 100'000); },
       .show = [](const auto& s) { return std::to_string(s.max_sockets_per_user); }},
      {.key = "server.limits.streams_per_user",
       .type = "count",
       .flag = "--max-streams-per-user",
       .env = "BOWLINE_MAX_STREAMS_PER_USER",
       .default_value = "16",
       .summary = "event streams one user may hold open at once",
       .details = "event streams (`GET /api/v1/events`: one per open web UI tab) one user may "
                  "hold open",
       .set = [](auto& s, const auto& v) { s.max_streams_per_user = parse::count(v, 100'000); },
       .show = [](const auto& s) { return std::to_string(s.max_streams_per_user); }},
      {.key = "server.limits.slow_requests_per_user",
       .type = "count",
       .flag = "--max-slow-requests-per-user",
       .env = "BOWLINE_MAX_SLOW_REQUESTS_PER_USER",
       .default_value = "4",
       .summary = "answers one user may have waiting on spaces at once (resumes, tunnels' "
                  "connects, terminals' logins, port checks); more get 429",
       .details = "answers one user may have waiting on spaces at once: a resume of a suspended "
                  "space, a tunnel's TCP connect, a terminal's SSH login, a port check. Each "
                  "waits on a thread of its own, never on an HTTP worker; a further one gets 429 "
                  "with `Retry-After`, so one user with slow guests cannot hold the server's "
                  "workers",
       .set = [](auto& s,
                 const auto& v) { s.max_slow_requests_per_user = parse::count(v, 100'000); },
       .show = [](const auto& s) { return std::to_string(s.max_slow_requests_per_user); }},
      {.key = "server.limits.connections_per_address",
       .type = "count",
       .flag = "--max-connections-per-address",
       .env = "BOWLINE_MAX_CONNECTIONS_PER_ADDRESS",
       .default_value = "1024",
       .summary = "open connections from one client address (IPv6: its /64); an eighth of "
                  "server.limits.connections stays for signed-in clients whatever strangers do",
       .details = "open connections from one client address (an IPv6 client counts by its /64). "
                  "Connections that have not yet shown a credential are shed oldest first when "
                  "the server runs short; an eighth of `server.limits.connections` is kept for "
                  "signed-in clients whatever strangers do",
       .set = [](auto& s,
                 const auto& v) { s.max_connections_per_address = parse::count(v, 1'000'000); },
       .show = [](const auto& s) { return std::to_string(s.max_connections_per_address); }},
      {.key = "server.retention.events",
       .type = "duration",
       .flag = "--event-retention",
       .env = "BOWLINE_EVENT_RETENTION",
       .default_value = "7d",
       .summary = "how long events are kept (7d, 48h)",
       .details = "how long events are kept (the periodic audit drops older ones; at least `1h`)",
       .set = [](auto& s, const auto& v) { s.event_retention = parse::retention(v); },
       .show = [](const auto& s) { return show::hours(s.event_retention); }},
      {.key = "server.retention.operations",
       .type = "duration",
       .flag = "--operation-retention",
       .env = "BOWLINE_OPERATION_RETENTION",
       .default_value = "30d",
       .summary = "how long finished operations are kept (30d)",
       .details = "how long finished operations are kept; unfinished ones always stay",
       .set = [](auto& s, const auto& v) { s.operation_retention = parse::retention(v); },
       .show = [](const auto& s) { return show::hours(s.operation_retention); }},
      {.key = "server.audit.retention",
       .type = "duration",
       .flag = "--audit-retention",
       .env = "BOWLINE_AUDIT_RETENTION",
       .default_value = "90d",
       .summary = "how long the audit log keeps its entries (90d)",
       .details = "how long the audit log keeps each entry (who changed what, and every socket "
                  "opened into a space) in the store; older ones are pruned "
                  "([audit.md](audit.md))",
       .set = [](auto& s, const auto& v) { s.audit_retention = parse::retention(v); },
       .show = [](const auto& s) { return show::hours(s.audit_retention); }},
      {.key = "server.audit.file",
       .type = "path",
       .flag = "--audit-file",
       .env = "BOWLINE_AUDIT_FILE",
       .default_doc = "none",
       .summary = "also append each audit entry to this file as a JSON line (for a log shipper)",
       .details = "also append each audit entry to this file, one JSON object per line, for a "
                  "log shipper; made 0600 and reopened for every entry, so log rotation needs "
                  "no signal ([audit.md](audit.md))",
       .set = [](auto& s, const auto& v) { s.audit_file = parse::path(v); },
       .show = [](const auto& s) { return show::path_or(s.audit_file, "(none)"); }},
      {.key = "server.stats.interval",
       .type = "duration",
       .flag = "--stats-interval",
       .env = "BOWLINE_STATS_INTERVAL",
       .default_value = "10s",
       .summary = "how often what each space uses is sampled from the nodes (10s; 0: never)",
       .details = "how often the server asks each node what its running spaces use (one libvirt "
                  "call for all domains: CPU, memory, disk, network); `0` turns sampling off, "
                  "and with it `GET /api/v1/spaces/{id}/stats`' figures, the `bowline_space_*` "
                  "series of `/metrics` and the UI's charts ([api.md](api.md#what-a-space-uses))",
       .set = [](auto& s, const auto& v) { s.stats_interval = parse::duration(v, true); },
       .show = [](const auto& s) { return show::seconds(s.stats_interval); }},
      {.key = "server.stats.history",
       .type = "duration",
       .flag = "--stats-history",
       .env = "BOWLINE_STATS_HISTORY",
       .default_value = "1h",
       .summary = "how far back each space's statistics are kept in memory (1h; at most 1d)",
       .details = "how far back each space's figures are kept, in memory only: `history / "
                  "interval` points of 48 bytes per space that ran within it (the defaults: 360 "
                  "points, about 17 KiB a space). At least one interval, at most `1d`",
       .set = [](auto& s, const auto& v) { s.stats_history = parse::stats_history(v); },
       .show = [](const auto& s) { return show::seconds(s.stats_history); }},
      {.key = "server.idle.suspend_after",
       .type = "duration",
       .flag = "--idle-suspend-after",
       .env = "BOWLINE_IDLE_SUSPEND_AFTER",
       .default_value = "0",
       .default_doc = "`0` (never)",
       .summary = "how long a space may sit idle before it is suspended, where its template has "
                  "no idleSuspend (30m; 0: never, the default); needs server.stats.interval",
       .details = "how long a space may sit idle before it is suspended, for templates without "
                  "`idleSuspend`; `0` never suspends. Idleness is judged from the sampled "
                  "statistics, so it needs `server.stats.interval` "
                  "([templates.md](templates.md#suspend-when-idle))",
       .set = [](auto& s, const auto& v) { s.idle_suspend_after = parse::duration(v, true); },
       .show = [](const auto& s) { return show::seconds(s.idle_suspend_after); }},
      {.key = "server.idle.cpu_percent",
       .type = "percent",
       .flag = "--idle-cpu-percent",
       .env = "BOWLINE_IDLE_CPU_PERCENT",
       .default_value = "5",
       .summary = "the guest CPU share (% of its vCPUs, 1-100) below which a space counts as "
                  "idle (5)",
       .details = "the guest CPU share (% of its vCPUs, 1 to 100) below which a space counts as "
                  "idle",
       .set =
           [](auto& s, const auto& v) {
             s.idle_cpu_percent = static_cast<unsigned>(parse::count(v, 100));
           },
       .show = [](const auto& s) { return std::to_string(s.idle_cpu_percent); }},
      {.key = "server.idle.trim_guest_cache",
       .type = "boolean",
       .flag = "--idle-trim-guest-cache",
       .env = "BOWLINE_IDLE_TRIM_GUEST_CACHE",
       .default_value = "true",
       .summary = "before a suspend, drop the guest's clean page cache through its agent so that "
                  "less memory is saved and restored (true, the default; false)",
       .details = "before an idle suspend, drop the guest's clean page cache through its agent, "
                  "so that less memory is saved and restored; `false` keeps the cache",
       .set = [](auto& s, const auto& v) { s.idle_trim_guest_cache = parse::boolean(v); },
       .show = [](const auto& s) { return show::boolean(s.idle_trim_guest_cache); }},
      {.key = "server.pools.wait",
       .type = "word",
       .flag = "--pools-wait",
       .env = "BOWLINE_POOLS_WAIT",
       .default_value = "suspended",
       .summary = "how a ready pool member waits for its claim: suspended (memory on disk) or "
                  "running",
       .details = "how a pool member waits once it is ready. `suspended`: saved to disk (as an "
                  "idle suspend), so a waiting member costs disk rather than memory, and a claim "
                  "resumes it (seconds) before it is personalised. `running`: booted, for claims "
                  "that must not wait for a resume",
       .set =
           [](auto& s, const auto& v) {
             const auto word = parse::word(v);
             if (word != "suspended" && word != "running")
               throw v.error("\"" + word + "\" is not suspended or running");
             s.pools_wait_suspended = word == "suspended";
           },
       .show =
           [](const auto& s) {
             return std::string(s.pools_wait_suspended ? "suspended" : "running");
           }},
      {.key = "server.trusted_proxies",
       .type = "networks",
       .flag = "--trusted-proxies",
       .env = "BOWLINE_TRUSTED_PROXIES",
       .default_value = "",
       .default_doc = "none",
       .summary = "reverse proxies (IPv4 CIDRs, comma-separated) whose X-Forwarded-For names the "
                  "client that login limits count; empty: the header is never believed",
       .details = "reverse proxies (IPv4 networks or addresses, comma-separated, e.g. "
                  "`10.0.0.5,10.1.0.0/16`) whose `X-Forwarded-For` header names the client. "
                  "Login limits count failures per client address and per username from one "
                  "address; from any other peer the header is ignored, so a client cannot pose "
                  "as another address (to escape its own limit or to lock someone else out). "
                  "Behind a proxy, set it: otherwise every login counts against the proxy's "
                  "address",
       .set = [](auto& s, const auto& v) { s.trusted_proxies = parse::networks(v); },
       .show =
           [](const auto& s) {
             return show::list(
                 s.trusted_proxies, [](const auto& p) { return p.to_string(); }, "(none)");
           }},
      {.key = "server.kubevirt.name",
       .type = "name",
       .flag = "--kubevirt-node",
       .env = "BOWLINE_KUBEVIRT_NAME",
       .default_value = "",
       .default_doc = "empty (no kubevirt node)",
       .summary = "a KubeVirt cluster as a second node of this name (empty: none)",
       .details = "a KubeVirt cluster as a second node of this name (a DNS label, not `local`); "
                  "spaces created with `node: NAME` run there "
                  "([kubevirt.md](kubevirt.md#the-kubevirt-node))",
       .set = [](auto& s, const auto& v) { s.kubevirt_name = parse::node_name(v); },
       .show = [](const auto& s) { return s.kubevirt_name; }},
      {.key = "server.kubevirt.kubeconfig",
       .type = "path",
       .flag = "--kubevirt-kubeconfig",
       .env = "BOWLINE_KUBEVIRT_KUBECONFIG",
       .default_value = "",
       .default_doc = "`$KUBECONFIG`, else `~/.kube/config`",
       .summary = "the kubeconfig that reaches the cluster (default: $KUBECONFIG, else "
                  "~/.kube/config)",
       .details = "the kubeconfig that reaches the cluster; read once at start-up",
       .set = [](auto& s, const auto& v) { s.kubevirt_kubeconfig = parse::path(v); },
       .show =
           [](const auto& s) {
             return show::path_or(s.kubevirt_kubeconfig, "($KUBECONFIG, else ~/.kube/config)");
           }},
      {.key = "server.kubevirt.context",
       .type = "text",
       .flag = "--kubevirt-context",
       .env = "BOWLINE_KUBEVIRT_CONTEXT",
       .default_value = "",
       .default_doc = "the kubeconfig's `current-context`",
       .summary = "the kubeconfig's context to use (default: its current-context)",
       .details = "the kubeconfig context to use",
       .set = [](auto& s, const auto& v) { s.kubevirt_context = parse::word(v); },
       .show =
           [](const auto& s) {
             return s.kubevirt_context.empty() ? std::string("(current-context)")
                                               : s.kubevirt_context;
           }},
      {.key = "server.kubevirt.namespace",
       .type = "name",
       .flag = "--kubevirt-namespace",
       .env = "BOWLINE_KUBEVIRT_NAMESPACE",
       .default_value = "default",
       .summary = "the namespace the kubevirt node's spaces live in",
       .details = "the namespace every kubevirt space's objects live in",
       .set = [](auto& s, const auto& v) { s.kubevirt_namespace = parse::namespace_name(v); },
       .show = [](const auto& s) { return s.kubevirt_namespace; }},
      {.key = "server.quota.spaces",
       .type = "limit",
       .flag = "--quota-spaces",
       .env = "BOWLINE_QUOTA_SPACES",
       .default_value = "10",
       .summary = "spaces a user (not an admin) may hold unless their own quota says (10; a "
                  "number, or unlimited)",
       .details = "how many spaces a user who is not an admin may hold, unless their own quota "
                  "says otherwise; a number or `unlimited` ([quotas](#quotas))",
       .set = [](auto& s, const auto& v) { s.default_quota.spaces = parse::limit(v, false); },
       .show = [](const auto& s) { return show::limit(s.default_quota.spaces, false); }},
      {.key = "server.quota.cpus",
       .type = "limit",
       .flag = "--quota-cpus",
       .env = "BOWLINE_QUOTA_CPUS",
       .default_value = "16",
       .summary = "vCPUs a user's spaces may have in all unless their own quota says (16, or "
                  "unlimited)",
       .details = "how many vCPUs such a user's spaces may have in all",
       .set = [](auto& s, const auto& v) { s.default_quota.cpus = parse::limit(v, false); },
       .show = [](const auto& s) { return show::limit(s.default_quota.cpus, false); }},
      {.key = "server.quota.memory",
       .type = "limit",
       .flag = "--quota-memory",
       .env = "BOWLINE_QUOTA_MEMORY",
       .default_value = "32G",
       .summary = "memory a user's spaces may have in all unless their own quota says (32G, or "
                  "unlimited)",
       .details = "how much memory such a user's spaces may have in all",
       .set = [](auto& s, const auto& v) { s.default_quota.memory = parse::limit(v, true); },
       .show = [](const auto& s) { return show::limit(s.default_quota.memory, true); }},
      {.key = "server.quota.disk",
       .type = "limit",
       .flag = "--quota-disk",
       .env = "BOWLINE_QUOTA_DISK",
       .default_value = "500G",
       .summary = "disk a user's spaces, disks, snapshots and downloads may have in all unless "
                  "their own quota says (500G, or unlimited)",
       .details = "how much disk such a user's spaces, disks, snapshots and downloads may take "
                  "in all",
       .set = [](auto& s, const auto& v) { s.default_quota.disk = parse::limit(v, true); },
       .show = [](const auto& s) { return show::limit(s.default_quota.disk, true); }},
  });
  return table;
}

}  // namespace bowline::server
