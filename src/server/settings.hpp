// The server's settings, from a flag, an environment variable, the YAML config file or the
// default, in that order of precedence; each value remembers where it came from so
// `bowline server --print-config` can say. knot's own names for its KVM settings
// (--kvm-images-path, KNOT_KVM_IMAGES_PATH, ...) work beside bowline's; when both spellings of
// one environment variable are set, bowline's wins and the other is named as ignored.
// Each setting is one row of setting_table() (settings_table.cpp); settings.cpp resolves them,
// settings_parse.cpp checks their values, settings_describe.cpp prints them.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/kvm_probe.hpp"
#include "server/node_settings.hpp"
#include "spec/ipv4.hpp"
#include "store/records.hpp"

namespace bowline::server {

enum class SettingSource { Default, File, Env, Flag };
const char* to_string(SettingSource source);  // default | file | env | flag

// Whether the server speaks HTTPS without a certificate given (server.tls.mode): auto (a
// self-signed one off loopback, plain HTTP on loopback), self-signed (also on loopback) or
// off (plain HTTP everywhere, for a TLS front end).
enum class TlsMode { Auto, SelfSigned, Off };
const char* to_string(TlsMode mode);  // auto | self-signed | off

// What stops guests spoofing (server.kvm.guest_filter): auto (the guard where libvirt is on
// this host, libvirt's nwfilter for one elsewhere), guard (engine/guest_guard.hpp) or nwfilter.
enum class GuestFilter { Auto, Guard, Nwfilter };
const char* to_string(GuestFilter filter);  // auto | guard | nwfilter

class SettingsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ServerSettings {
  std::string listen = "127.0.0.1:7470";
  std::filesystem::path data_dir = "/var/lib/bowline";
  // More nodes than the one above (server/node_settings.hpp); empty: this host's libvirt only.
  std::vector<NodeSetting> nodes;
  std::string libvirt_uri = "qemu:///system";
  // auto: kvm when a probe domain really runs under KVM at start-up, else qemu with a warning.
  engine::DomainTypeSetting domain_type = engine::DomainTypeSetting::Auto;
  std::chrono::seconds stop_timeout{60};
  std::chrono::seconds reconcile_interval{60};
  std::filesystem::path images_path = "/var/lib/libvirt/images/bowline";
  std::filesystem::path cloud_image_path;  // default <images_path>/cloud-images
  std::filesystem::path base_image_path;   // default <images_path>/base
  // Directories under which an admin may name an image by path (templates, disk create); the
  // default, empty, takes no path at all: users name images, never host files.
  std::vector<std::filesystem::path> import_paths;
  // The largest image a template's URL may download, in bytes.
  std::uint64_t max_image_size = std::uint64_t{64} << 30;
  std::vector<std::string> resolvers{"1.1.1.1", "1.0.0.1"};
  // Host ports that publish external NAT spaces' guest ports (template external: PortList).
  std::uint16_t external_port_first = 20000;
  std::uint16_t external_port_last = 29999;
  // The host address those ports are published on. A browser sends a host name's cookies to
  // every port of it, so a guest's port on the web UI's address would receive the UI's session
  // cookie: empty (the default) publishes nothing and refuses such spaces, saying why; "any"
  // publishes on every address of the host but loopback (the operator's choice, when the UI is
  // reached by a name of its own).
  std::string external_address;
  // Host CPUs set aside for spaces whose instance type dedicates CPUs; empty: none.
  std::vector<unsigned> dedicated_cpus;
  // What filters the guests' traffic (engine/guest_guard.hpp).
  GuestFilter guest_filter = GuestFilter::Auto;
  // The web UI's files (ui/ and node_modules/); default: the source tree's web/, set at build
  // time, so that a server started from the build directory serves the UI.
  std::filesystem::path web_root;
  // The session cookie's Secure flag; nullopt: when the browser came over HTTPS (bowline's own,
  // where it is always Secure, or a TLS front end's).
  std::optional<bool> secure_cookies;
  // Open connections in all, and sockets and event streams per user, beyond which more are
  // refused (docs/security.md).
  std::size_t max_connections = 8192;
  std::size_t max_sockets_per_user = 64;
  std::size_t max_streams_per_user = 16;
  std::size_t max_slow_requests_per_user = 4;
  std::size_t max_connections_per_address = 1024;
  // How long events and finished operations are kept.
  std::chrono::hours event_retention{24 * 7};
  std::chrono::hours operation_retention{24 * 30};
  // The audit log (docs/audit.md): kept in the store this long, and each entry also written as
  // a JSON line to audit_file when one is set.
  std::chrono::hours audit_retention{24 * 90};
  std::filesystem::path audit_file;
  // How often what each space uses is sampled (0: never) and how long it is kept in memory.
  std::chrono::seconds stats_interval{10};
  std::chrono::seconds stats_history{3600};
  // Idle suspend: the default for templates without idleSuspend (0: never), and the guest CPU
  // share (% of its vCPUs) below which a space counts as idle.
  std::chrono::seconds idle_suspend_after{0};
  unsigned idle_cpu_percent = 5;
  // Drop the guest's clean page cache before a suspend (through its agent): less to save.
  bool idle_trim_guest_cache = true;
  // Pool members, once ready, wait suspended (true) or running (false).
  bool pools_wait_suspended = true;
  // Reverse proxies whose X-Forwarded-For is believed for login limits; empty: none.
  std::vector<spec::Ipv4Network> trusted_proxies;
  // HTTPS with these PEM files (both or neither); neither: as tls_mode says (server/tls.hpp).
  std::filesystem::path tls_cert;
  std::filesystem::path tls_key;
  TlsMode tls_mode = TlsMode::Auto;
  // The web UI's address as browsers reach it ("https://bowline.example.com"); empty: the
  // listen address's. Preview logins send browsers there.
  std::string public_url;
  // Preview URLs of guest ports (docs/teams.md): their wildcard's domain (empty: off), and its
  // certificate and key (neither: a self-signed one made in the data directory).
  std::string preview_domain;
  std::filesystem::path preview_cert;
  std::filesystem::path preview_key;
  // Single sign-on through an OpenID Connect provider (docs/teams.md): its issuer (empty:
  // off), this server's client id and the file with its secret, the provider's CA, the claims
  // that name a user and list their groups, and what groups give.
  std::string sso_issuer;
  std::string sso_client_id;
  std::filesystem::path sso_client_secret_file;
  std::filesystem::path sso_ca_file;
  std::string sso_username_claim = "preferred_username";
  std::string sso_groups_claim = "groups";
  std::vector<std::string> sso_admin_groups;
  std::map<std::string, std::set<store::Permission>> sso_group_permissions;
  // A KubeVirt cluster as a second node (docs/kubevirt.md); an empty name: none.
  std::string kubevirt_name;
  std::filesystem::path kubevirt_kubeconfig;  // empty: $KUBECONFIG, else ~/.kube/config
  std::string kubevirt_context;               // empty: the kubeconfig's current-context
  std::string kubevirt_namespace = "default";
  // What each user who is not an admin may hold unless their own quota says otherwise
  // (server.quota.*; -1 is no limit). Finite by default: one user of a shared server cannot
  // take the host's memory or disk by accident or on purpose.
  store::Quota default_quota{10, 16, std::int64_t{32} << 30, std::int64_t{500} << 30};

  std::optional<std::filesystem::path> config_file;  // the file read, if any
  std::string config_file_source;                    // "--config", "BOWLINE_CONFIG" or ""
  std::map<std::string, SettingSource> sources;      // by key
  // By key: "--listen", "BOWLINE_LISTEN", "FILE:LINE", plus what was set and not used.
  std::map<std::string, std::string> origins;
};

struct SettingValue;  // a value as given, before it is checked (settings_value.hpp)

// One setting: a row of setting_table() (settings_table.cpp), the one place that names it.
// Parsing, --print-config, --help and docs/configuration.md's table all come from the rows.
struct Setting {
  const char* key;   // in the config file: "server.kvm.images_path"
  const char* type;  // what its value is, for the docs: "path", "duration", "size", ...
  const char* flag;  // "--images-path"
  const char* env;   // "BOWLINE_KVM_IMAGES_PATH"
  // knot's spelling of the same setting; nullptr when knot has none.
  const char* knot_flag = nullptr;  // "--kvm-images-path"
  const char* knot_env = nullptr;   // "KNOT_KVM_IMAGES_PATH"
  // The default, written as a value is and parsed by `set` like one; "" for none: the setting
  // keeps ServerSettings' own (empty, or derived from another setting at resolve).
  const char* default_value = "";
  const char* default_doc = nullptr;  // the docs' words for it, where it is not default_value
  const char* summary = "";           // one line, for `bowline server --help`
  const char* details = "";           // the docs' "what it is" (Markdown)
  // The value into its member; a SettingsError for a bad one.
  void (*set)(ServerSettings&, const SettingValue&) = nullptr;
  std::string (*show)(const ServerSettings&) = nullptr;  // the value as --print-config shows it
};
// Every setting, in the order --print-config and the docs show them.
const std::vector<Setting>& setting_table();

struct SettingsInput {
  std::map<std::string, std::string> flags;  // by key ("server.listen"): the flag's text
  // By key, when the flag was spelled another way than bowline's own (knot's --kvm-*).
  std::map<std::string, std::string> flag_spellings;
  std::map<std::string, std::string> env;  // the environment (BOWLINE_* and KNOT_KVM_* are read)
  std::optional<std::filesystem::path> config_file;  // --config
  std::filesystem::path cwd;  // relative paths resolve against it (where the server starts)
};

// Reads the config file (--config, else BOWLINE_CONFIG; none: no file), then applies env and
// flags. SettingsError with a message that names the setting and where it came from for an
// unreadable file, an unknown key or a bad value.
ServerSettings resolve_settings(const SettingsInput& input);

// Every effective setting with its source, one per line.
std::string describe_settings(const ServerSettings& settings);

// docs/configuration.md's table of the settings, from setting_table() (`bowline server
// --settings-markdown` prints it).
std::string settings_markdown();

// The environment of this process as a map (for SettingsInput::env).
std::map<std::string, std::string> process_environment();

}  // namespace bowline::server
