#include "server/settings.hpp"

#include <arpa/inet.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <utility>

#include "api/http_server.hpp"
#include "engine/placement.hpp"
#include "engine/quota.hpp"
#include "spec/quantity.hpp"
#include "util/files.hpp"
#include "util/strings.hpp"

extern char** environ;

#ifndef BOWLINE_WEB_ROOT_DEFAULT
#define BOWLINE_WEB_ROOT_DEFAULT "/usr/share/bowline/web"
#endif

namespace bowline::server {

namespace fs = std::filesystem;

const char* to_string(SettingSource source) {
  switch (source) {
    case SettingSource::Default:
      return "default";
    case SettingSource::File:
      return "file";
    case SettingSource::Env:
      return "env";
    case SettingSource::Flag:
      return "flag";
  }
  return "?";
}

const char* to_string(GuestFilter filter) {
  switch (filter) {
    case GuestFilter::Auto:
      return "auto";
    case GuestFilter::Guard:
      return "guard";
    case GuestFilter::Nwfilter:
      return "nwfilter";
  }
  return "?";
}

const char* to_string(TlsMode mode) {
  switch (mode) {
    case TlsMode::Auto:
      return "auto";
    case TlsMode::SelfSigned:
      return "self-signed";
    case TlsMode::Off:
      return "off";
  }
  return "?";
}

const std::vector<SettingKey>& setting_keys() {
  static const std::vector<SettingKey> keys{
      {"server.listen", "--listen", "BOWLINE_LISTEN", "address and port of the HTTP API"},
      {"server.tls.cert", "--tls-cert", "BOWLINE_TLS_CERT",
       "serve HTTPS with this PEM certificate (chain); needs server.tls.key"},
      {"server.tls.key", "--tls-key", "BOWLINE_TLS_KEY", "the PEM private key of server.tls.cert"},
      {"server.tls.mode", "--tls-mode", "BOWLINE_TLS_MODE",
       "without a certificate: auto (a self-signed one, made in the data directory, when the "
       "listen address is not loopback), self-signed (also on loopback) or off (plain HTTP)"},
      {"server.data_dir", "--data-dir", "BOWLINE_DATA_DIR", "where the database lives"},
      {"server.libvirt_uri", "--libvirt-uri", "BOWLINE_LIBVIRT_URI", "libvirt connection URI"},
      {"server.domain_type", "--domain-type", "BOWLINE_DOMAIN_TYPE",
       "auto (kvm when a KVM guest really runs here, else qemu with a warning), kvm (hardware "
       "virtualisation, refused at start where it does not run) or qemu (software emulation)"},
      {"server.stop_timeout", "--stop-timeout", "BOWLINE_STOP_TIMEOUT",
       "how long a stop waits for the guest before forcing it off (60, 90s, 2m)"},
      {"server.reconcile_interval", "--reconcile-interval", "BOWLINE_RECONCILE_INTERVAL",
       "how often the store is compared with libvirt (0: only at start-up)"},
      {"server.kvm.images_path", "--images-path", "BOWLINE_KVM_IMAGES_PATH",
       "one directory per space (disk, seed, console log)", "--kvm-images-path",
       "KNOT_KVM_IMAGES_PATH"},
      {"server.kvm.cloud_image_path", "--cloud-image-path", "BOWLINE_KVM_CLOUD_IMAGE_PATH",
       "the library that bare image names resolve in", "--kvm-cloud-image-path",
       "KNOT_KVM_CLOUD_IMAGE_PATH"},
      {"server.kvm.base_image_path", "--base-image-path", "BOWLINE_KVM_BASE_IMAGE_PATH",
       "where downloaded images are cached", "--kvm-base-image-path", "KNOT_KVM_BASE_IMAGE_PATH"},
      {"server.kvm.import_paths", "--import-paths", "BOWLINE_KVM_IMPORT_PATHS",
       "directories (comma-separated) under which an admin may name an image by its path; "
       "empty, the default: no image is named by path"},
      {"server.kvm.max_image_size", "--max-image-size", "BOWLINE_KVM_MAX_IMAGE_SIZE",
       "the largest image a template's URL may download (64G, 512M)"},
      {"server.kvm.resolvers", "--resolvers", "BOWLINE_KVM_RESOLVERS",
       "DNS servers for bridged guests (comma-separated)", "--kvm-resolvers", "KNOT_KVM_RESOLVERS"},
      {"server.kvm.dedicated_cpus", "--dedicated-cpus", "BOWLINE_KVM_DEDICATED_CPUS",
       "host CPUs (e.g. 4-15) set aside for spaces whose instance type dedicates CPUs (pinned "
       "vCPUs and emulator thread); empty: none"},
      {"server.kvm.guest_filter", "--guest-filter", "BOWLINE_KVM_GUEST_FILTER",
       "what stops guests spoofing MACs, addresses, ARP and DHCP: auto (bowline's nftables guard "
       "when libvirt is on this host, else libvirt's nwfilter), guard or nwfilter"},
      {"server.external_ports", "--external-ports", "BOWLINE_EXTERNAL_PORTS",
       "host ports (FIRST-LAST) that publish the guest ports of NAT spaces with external: true"},
      {"server.external_address", "--external-address", "BOWLINE_EXTERNAL_ADDRESS",
       "the IPv4 address of this host those ports are published on, one the web UI is not "
       "reached by (its cookies would reach the guests); any: every address but loopback; "
       "empty, the default: no port is published"},
      {"server.web_root", "--web-root", "BOWLINE_WEB_ROOT",
       "the web UI's files (ui/ and node_modules/ from npm ci)"},
      {"server.secure_cookies", "--secure-cookies", "BOWLINE_SECURE_COOKIES",
       "the session cookie's Secure flag: auto (when the browser came over HTTPS), true, false"},
      {"server.limits.connections", "--max-connections", "BOWLINE_MAX_CONNECTIONS",
       "open connections (event streams and WebSockets included) beyond which new ones are "
       "closed at once"},
      {"server.limits.sockets_per_user", "--max-sockets-per-user", "BOWLINE_MAX_SOCKETS_PER_USER",
       "WebSockets (consoles, displays, terminals, tunnels) one user may hold open at once"},
      {"server.limits.streams_per_user", "--max-streams-per-user", "BOWLINE_MAX_STREAMS_PER_USER",
       "event streams one user may hold open at once"},
      {"server.limits.slow_requests_per_user", "--max-slow-requests-per-user",
       "BOWLINE_MAX_SLOW_REQUESTS_PER_USER",
       "answers one user may have waiting on spaces at once (resumes, tunnels' connects, "
       "terminals' logins, port checks); more get 429"},
      {"server.limits.connections_per_address", "--max-connections-per-address",
       "BOWLINE_MAX_CONNECTIONS_PER_ADDRESS",
       "open connections from one client address (IPv6: its /64); an eighth of "
       "server.limits.connections stays for signed-in clients whatever strangers do"},
      {"server.retention.events", "--event-retention", "BOWLINE_EVENT_RETENTION",
       "how long events are kept (7d, 48h)"},
      {"server.retention.operations", "--operation-retention", "BOWLINE_OPERATION_RETENTION",
       "how long finished operations are kept (30d)"},
      {"server.stats.interval", "--stats-interval", "BOWLINE_STATS_INTERVAL",
       "how often what each space uses is sampled from the nodes (10s; 0: never)"},
      {"server.stats.history", "--stats-history", "BOWLINE_STATS_HISTORY",
       "how far back each space's statistics are kept in memory (1h; at most 1d)"},
      {"server.idle.suspend_after", "--idle-suspend-after", "BOWLINE_IDLE_SUSPEND_AFTER",
       "how long a space may sit idle before it is suspended, where its template has no "
       "idleSuspend (30m; 0: never, the default); needs server.stats.interval"},
      {"server.idle.cpu_percent", "--idle-cpu-percent", "BOWLINE_IDLE_CPU_PERCENT",
       "the guest CPU share (% of its vCPUs, 1-100) below which a space counts as idle (5)"},
      {"server.idle.trim_guest_cache", "--idle-trim-guest-cache", "BOWLINE_IDLE_TRIM_GUEST_CACHE",
       "before a suspend, drop the guest's clean page cache through its agent so that less "
       "memory is saved and restored (true, the default; false)"},
      {"server.trusted_proxies", "--trusted-proxies", "BOWLINE_TRUSTED_PROXIES",
       "reverse proxies (IPv4 CIDRs, comma-separated) whose X-Forwarded-For names the client "
       "that login limits count; empty: the header is never believed"},
      {"server.kubevirt.name", "--kubevirt-node", "BOWLINE_KUBEVIRT_NAME",
       "a KubeVirt cluster as a second node of this name (empty: none)"},
      {"server.kubevirt.kubeconfig", "--kubevirt-kubeconfig", "BOWLINE_KUBEVIRT_KUBECONFIG",
       "the kubeconfig that reaches the cluster (default: $KUBECONFIG, else ~/.kube/config)"},
      {"server.kubevirt.context", "--kubevirt-context", "BOWLINE_KUBEVIRT_CONTEXT",
       "the kubeconfig's context to use (default: its current-context)"},
      {"server.kubevirt.namespace", "--kubevirt-namespace", "BOWLINE_KUBEVIRT_NAMESPACE",
       "the namespace the kubevirt node's spaces live in"},
      {"server.quota.spaces", "--quota-spaces", "BOWLINE_QUOTA_SPACES",
       "spaces a user (not an admin) may hold unless their own quota says (10; a number, or "
       "unlimited)"},
      {"server.quota.cpus", "--quota-cpus", "BOWLINE_QUOTA_CPUS",
       "vCPUs a user's spaces may have in all unless their own quota says (16, or unlimited)"},
      {"server.quota.memory", "--quota-memory", "BOWLINE_QUOTA_MEMORY",
       "memory a user's spaces may have in all unless their own quota says (32G, or unlimited)"},
      {"server.quota.disk", "--quota-disk", "BOWLINE_QUOTA_DISK",
       "disk a user's spaces, disks, snapshots and downloads may have in all unless their own "
       "quota says (500G, or unlimited)"},
  };
  return keys;
}

namespace {

// A value before it is checked, with where it came from.
struct Raw {
  std::vector<std::string> items;  // one item, or a list (resolvers)
  bool list = false;
  SettingSource source = SettingSource::Default;
  std::string origin;   // "--listen", "BOWLINE_LISTEN", "FILE"
  std::string ignored;  // another spelling that was set too and lost: "KNOT_KVM_... also set"
  std::string key;      // set when the value is applied

  std::string where() const {
    switch (source) {
      case SettingSource::Flag:
        return "flag " + origin;
      case SettingSource::Env:
        return "environment variable " + origin;
      case SettingSource::File:
        return origin;
      case SettingSource::Default:
        return "default";
    }
    return origin;
  }
  const std::string& text(const std::string& setting) const {
    if (list || items.size() != 1)
      throw SettingsError(setting + " (" + where() + "): expected a single value, not a list");
    return items.front();
  }
};

std::vector<std::string> known_keys() {
  std::vector<std::string> out;
  for (const auto& k : setting_keys()) out.emplace_back(k.key);
  return out;
}

void check_known(const std::string& key, const std::string& where) {
  const auto keys = known_keys();
  if (std::find(keys.begin(), keys.end(), key) != keys.end()) return;
  std::vector<std::string_view> views(keys.begin(), keys.end());
  const auto near = util::nearest(key, views);
  throw SettingsError(where + ": unknown setting " + key +
                      (near.empty() ? std::string() : " (did you mean " + near + "?)"));
}

void flatten(const YAML::Node& node, const std::string& prefix, const std::string& file,
             std::map<std::string, Raw>& out) {
  for (const auto& entry : node) {
    const auto name = entry.first.as<std::string>();
    const auto key = prefix.empty() ? name : prefix + "." + name;
    const auto& value = entry.second;
    const auto where = file + ":" + std::to_string(entry.first.Mark().line + 1);
    if (value.IsMap()) {
      // A section is what some setting's key starts with (server, server.kvm, server.limits,
      // ...): a fixed list of them had left server.limits and server.retention out of files.
      const auto keys = known_keys();
      if (std::none_of(keys.begin(), keys.end(),
                       [&](const std::string& k) { return k.rfind(key + ".", 0) == 0; }))
        check_known(key, where);
      flatten(value, key, file, out);
      continue;
    }
    check_known(key, where);
    Raw raw;
    raw.source = SettingSource::File;
    raw.origin = where;
    if (value.IsSequence()) {
      raw.list = true;
      for (const auto& item : value) {
        if (!item.IsScalar())
          throw SettingsError(where + ": " + key + ": expected a list of values");
        raw.items.push_back(item.as<std::string>());
      }
    } else if (value.IsScalar()) {
      raw.items.push_back(value.as<std::string>());
    } else if (value.IsNull()) {
      continue;  // "key:" with nothing: as if absent
    } else {
      throw SettingsError(where + ": " + key + ": expected a value");
    }
    out[key] = std::move(raw);
  }
}

std::map<std::string, Raw> read_file(const fs::path& file) {
  const auto text = util::read_file(file.string());
  if (!text) throw SettingsError("cannot read the config file " + file.string());
  YAML::Node root;
  try {
    root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    throw SettingsError(file.string() + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  std::map<std::string, Raw> out;
  if (root.IsNull()) return out;
  if (!root.IsMap())
    throw SettingsError(file.string() + ": expected a mapping with a server: section");
  flatten(root, "", file.string(), out);
  return out;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  for (auto& part : util::split(text, ',')) {
    auto item = util::trim(part);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

fs::path resolve_path(const std::string& key, const Raw& raw, const fs::path& cwd) {
  const auto& text = raw.text(key);
  if (text.empty()) throw SettingsError(key + " (" + raw.where() + "): the path is empty");
  fs::path p(text);
  if (p.is_relative()) p = cwd / p;
  return p.lexically_normal();
}

std::chrono::seconds parse_duration(const std::string& key, const Raw& raw,
                                    bool zero_allowed = false) {
  const auto text = util::trim(raw.text(key));
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const auto unit = text.substr(digits);
  long long factor = 0;
  if (unit.empty() || unit == "s") factor = 1;
  if (unit == "m") factor = 60;
  if (unit == "h") factor = 3600;
  if (unit == "d") factor = 86400;
  if (digits == 0 || digits > 9 || factor == 0)
    throw SettingsError(key + " (" + raw.where() + "): \"" + text +
                        "\" is not a duration such as 60, 90s, 2m, 12h or 7d");
  const auto seconds = std::stoll(text.substr(0, digits)) * factor;
  if (seconds <= 0 && !zero_allowed)
    throw SettingsError(key + " (" + raw.where() + "): must be more than 0");
  return std::chrono::seconds(seconds);
}

// A DNS-1123 label: what Kubernetes namespaces and bowline's node names are.
bool is_dns_label(const std::string& text) {
  if (text.empty() || text.size() > 63 || text.front() == '-' || text.back() == '-') return false;
  for (char c : text)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

bool is_ip_address(const std::string& text) {
  unsigned char buffer[16];
  return inet_pton(AF_INET, text.c_str(), buffer) == 1 ||
         inet_pton(AF_INET6, text.c_str(), buffer) == 1;
}

// Every value given anywhere, by key: the file's, then the environment's over them (bowline's
// spelling over knot's), then the flags'.
std::map<std::string, Raw> given_values(const SettingsInput& input, ServerSettings& s) {
  std::map<std::string, Raw> raw;
  std::optional<fs::path> file = input.config_file;
  if (file) {
    s.config_file_source = "--config";
  } else if (auto it = input.env.find("BOWLINE_CONFIG");
             it != input.env.end() && !it->second.empty()) {
    file = it->second;
    s.config_file_source = "BOWLINE_CONFIG";
  }
  if (file) {
    if (file->is_relative()) file = (input.cwd / *file).lexically_normal();
    raw = read_file(*file);
    s.config_file = file;
  }
  const auto env_value = [&](const char* name) -> const std::string* {
    if (!name) return nullptr;
    const auto it = input.env.find(name);
    return it == input.env.end() || it->second.empty() ? nullptr : &it->second;
  };
  for (const auto& k : setting_keys()) {
    const auto* ours = env_value(k.env);
    const auto* knots = env_value(k.knot_env);
    if (!ours && !knots) continue;
    Raw r;
    r.source = SettingSource::Env;
    r.origin = ours ? k.env : k.knot_env;
    r.items = {ours ? *ours : *knots};
    if (ours && knots) r.ignored = std::string(k.knot_env) + " also set, ignored";
    raw[k.key] = std::move(r);
  }
  for (const auto& [key, value] : input.flags) {
    check_known(key, "command line");
    std::string flag;
    for (const auto& k : setting_keys())
      if (key == k.key) flag = k.flag;
    if (const auto it = input.flag_spellings.find(key); it != input.flag_spellings.end())
      flag = it->second;
    Raw r;
    r.source = SettingSource::Flag;
    r.origin = flag;
    r.items = {value};
    raw[key] = std::move(r);
  }
  return raw;
}

void set_listen(ServerSettings& s, const Raw& r, const fs::path&) {
  s.listen = util::trim(r.text("server.listen"));
  try {
    api::split_listen_address(s.listen);
  } catch (const std::invalid_argument& e) {
    throw SettingsError("server.listen (" + r.where() + "): " + e.what());
  }
}

void set_libvirt_uri(ServerSettings& s, const Raw& r, const fs::path&) {
  s.libvirt_uri = util::trim(r.text("server.libvirt_uri"));
  if (s.libvirt_uri.empty())
    throw SettingsError("server.libvirt_uri (" + r.where() + "): the URI is empty");
}

// A setting that names one of a few words (case and spaces aside): its value for the word,
// or a SettingsError that lists the words.
template <class T>
T one_of(const Raw& r, const char* key, std::initializer_list<std::pair<const char*, T>> words) {
  const auto value = util::to_lower(util::trim(r.text(key)));
  std::string listed;
  std::size_t i = 0;
  for (const auto& [word, result] : words) {
    if (value == word) return result;
    listed += (i == 0 ? "" : i + 1 == words.size() ? " and " : ", ") + std::string(word);
    ++i;
  }
  throw SettingsError(std::string(key) + " (" + r.where() + "): \"" + value + "\" is none of " +
                      listed);
}

void set_domain_type(ServerSettings& s, const Raw& r, const fs::path&) {
  using engine::DomainTypeSetting;
  s.domain_type = one_of<DomainTypeSetting>(r, "server.domain_type",
                                            {{"auto", DomainTypeSetting::Auto},
                                             {"kvm", DomainTypeSetting::Kvm},
                                             {"qemu", DomainTypeSetting::Qemu}});
}

void set_resolvers(ServerSettings& s, const Raw& r, const fs::path&) {
  std::vector<std::string> list;
  for (const auto& item : r.items)
    for (auto& part : split_list(item)) list.push_back(std::move(part));
  if (list.empty())
    throw SettingsError("server.kvm.resolvers (" + r.where() + "): the list is empty");
  for (const auto& address : list)
    if (!is_ip_address(address))
      throw SettingsError("server.kvm.resolvers (" + r.where() + "): \"" + address +
                          "\" is not an IP address");
  s.resolvers = std::move(list);
}

void set_import_paths(ServerSettings& s, const Raw& r, const fs::path& cwd) {
  std::vector<fs::path> list;
  for (const auto& item : r.items)
    for (auto& part : split_list(item)) {
      fs::path p(part);
      if (p.is_relative()) p = cwd / p;
      p = p.lexically_normal();
      if (p == p.root_path())
        throw SettingsError("server.kvm.import_paths (" + r.where() +
                            "): \"/\" would let an admin name any file of the host");
      list.push_back(std::move(p));
    }
  s.import_paths = std::move(list);
}

// A count from 1 to `most`.
std::size_t parse_count(const std::string& key, const Raw& raw, std::size_t most) {
  const auto text = util::trim(raw.text(key));
  if (text.empty() || text.size() > 7 ||
      text.find_first_not_of("0123456789") != std::string::npos || std::stoul(text) == 0 ||
      std::stoul(text) > most)
    throw SettingsError(key + " (" + raw.where() + "): \"" + text +
                        "\" is not a number from 1 to " + std::to_string(most));
  return std::stoul(text);
}

std::chrono::hours parse_retention(const std::string& key, const Raw& raw) {
  const auto seconds = parse_duration(key, raw);
  if (seconds < std::chrono::hours(1))
    throw SettingsError(key + " (" + raw.where() + "): keep them an hour at least");
  return std::chrono::duration_cast<std::chrono::hours>(seconds);
}

// At least one interval and at most a day: each space's ring is history / interval points.
void set_stats_history(ServerSettings& s, const Raw& r, const fs::path&) {
  const auto history = parse_duration("server.stats.history", r);
  if (history > std::chrono::hours(24))
    throw SettingsError("server.stats.history (" + r.where() + "): keep a day at most");
  s.stats_history = history;
}

void set_trusted_proxies(ServerSettings& s, const Raw& r, const fs::path&) {
  s.trusted_proxies.clear();
  for (const auto& item : r.items)
    for (const auto& part : split_list(item)) {
      auto net = spec::Ipv4Network::parse(part);
      if (!net && spec::Ipv4Address::parse(part)) net = spec::Ipv4Network::parse(part + "/32");
      if (!net)
        throw SettingsError("server.trusted_proxies (" + r.where() + "): \"" + part +
                            "\" is not an IPv4 network (e.g. 10.0.0.0/8) or address");
      s.trusted_proxies.push_back(*net);
    }
}

void set_external_ports(ServerSettings& s, const Raw& r, const fs::path&) {
  const auto text = util::trim(r.text("server.external_ports"));
  const auto dash = text.find('-');
  unsigned long first = 0, last = 0;
  bool ok = dash != std::string::npos && dash > 0 && dash + 1 < text.size() &&
            text.find_first_not_of("0123456789-") == std::string::npos && dash < 6 &&
            text.size() - dash - 1 <= 5;
  if (ok) {
    first = std::stoul(text.substr(0, dash));
    last = std::stoul(text.substr(dash + 1));
    ok = first >= 1 && last <= 65535 && first <= last;
  }
  if (!ok)
    throw SettingsError("server.external_ports (" + r.where() + "): \"" + text +
                        "\" is not a port range such as 20000-29999");
  s.external_port_first = static_cast<std::uint16_t>(first);
  s.external_port_last = static_cast<std::uint16_t>(last);
}

void set_external_address(ServerSettings& s, const Raw& r, const fs::path&) {
  const auto text = util::trim(r.text("server.external_address"));
  if (text.empty() || text == "any") {
    s.external_address = text;
    return;
  }
  const auto address = spec::Ipv4Address::parse(text);
  if (!address)
    throw SettingsError("server.external_address (" + r.where() + "): \"" + text +
                        "\" is not an IPv4 address (or any)");
  if ((address->value >> 24) == 127 || address->value == 0)
    throw SettingsError("server.external_address (" + r.where() + "): " + text +
                        " is not reachable from other hosts; name an address of this host's "
                        "network interfaces");
  s.external_address = text;
}

void set_dedicated_cpus(ServerSettings& s, const Raw& r, const fs::path&) {
  const auto text = util::trim(r.text("server.kvm.dedicated_cpus"));
  if (text.empty()) return;
  try {
    s.dedicated_cpus = engine::parse_cpu_list(text);
  } catch (const std::invalid_argument& e) {
    throw SettingsError("server.kvm.dedicated_cpus (" + r.where() + "): " + e.what());
  }
}

void set_max_image_size(ServerSettings& s, const Raw& r, const fs::path&) {
  const auto text = util::trim(r.text("server.kvm.max_image_size"));
  const auto parsed = spec::parse_size(text);
  if (!parsed.ok())
    throw SettingsError("server.kvm.max_image_size (" + r.where() + "): " + parsed.error());
  if (parsed.value() == 0)
    throw SettingsError("server.kvm.max_image_size (" + r.where() + "): must be more than 0");
  s.max_image_size = parsed.value();
}

void set_secure_cookies(ServerSettings& s, const Raw& r, const fs::path&) {
  const auto value = util::to_lower(util::trim(r.text("server.secure_cookies")));
  if (value == "true")
    s.secure_cookies = true;
  else if (value == "false")
    s.secure_cookies = false;
  else if (value != "auto")
    throw SettingsError("server.secure_cookies (" + r.where() + "): \"" + value +
                        "\" is none of auto, true and false");
}

void set_guest_filter(ServerSettings& s, const Raw& r, const fs::path&) {
  s.guest_filter = one_of<GuestFilter>(r, "server.kvm.guest_filter",
                                       {{"auto", GuestFilter::Auto},
                                        {"guard", GuestFilter::Guard},
                                        {"nwfilter", GuestFilter::Nwfilter}});
}

void set_trim_guest_cache(ServerSettings& s, const Raw& r, const fs::path&) {
  const auto value = util::to_lower(util::trim(r.text("server.idle.trim_guest_cache")));
  if (value != "true" && value != "false")
    throw SettingsError("server.idle.trim_guest_cache (" + r.where() + "): \"" + value +
                        "\" is neither true nor false");
  s.idle_trim_guest_cache = value == "true";
}

void set_tls_mode(ServerSettings& s, const Raw& r, const fs::path&) {
  s.tls_mode = one_of<TlsMode>(
      r, "server.tls.mode",
      {{"auto", TlsMode::Auto}, {"self-signed", TlsMode::SelfSigned}, {"off", TlsMode::Off}});
}

// A certificate needs its key and the other way round; a mode that makes or refuses one
// cannot go with one given.
void check_tls(const ServerSettings& s, const std::map<std::string, Raw>& raw) {
  const auto where = [&](const char* key) {
    return std::string(key) + " (" + raw.at(key).where() + ")";
  };
  const bool cert = raw.count("server.tls.cert"), key = raw.count("server.tls.key");
  if (cert && !key)
    throw SettingsError(where("server.tls.cert") +
                        " is set but server.tls.key is not: HTTPS needs the certificate's key too");
  if (key && !cert)
    throw SettingsError(where("server.tls.key") +
                        " is set but server.tls.cert is not: HTTPS needs the certificate too");
  if (cert && s.tls_mode == TlsMode::SelfSigned)
    throw SettingsError(where("server.tls.mode") + " is self-signed, but " +
                        where("server.tls.cert") + " names a certificate: keep one of them");
  if (cert && s.tls_mode == TlsMode::Off)
    throw SettingsError(where("server.tls.mode") + " is off, but " + where("server.tls.cert") +
                        " names a certificate: keep one of them");
}

void set_kubevirt_name(ServerSettings& s, const Raw& r, const fs::path&) {
  s.kubevirt_name = util::trim(r.text("server.kubevirt.name"));
  if (!s.kubevirt_name.empty() && !is_dns_label(s.kubevirt_name))
    throw SettingsError("server.kubevirt.name (" + r.where() + "): \"" + s.kubevirt_name +
                        "\" is not a node name (lowercase letters, digits and '-')");
  if (s.kubevirt_name == "local")
    throw SettingsError("server.kubevirt.name (" + r.where() +
                        "): \"local\" is the libvirt node's name");
}

void set_kubevirt_namespace(ServerSettings& s, const Raw& r, const fs::path&) {
  s.kubevirt_namespace = util::trim(r.text("server.kubevirt.namespace"));
  if (!is_dns_label(s.kubevirt_namespace))
    throw SettingsError("server.kubevirt.namespace (" + r.where() + "): \"" + s.kubevirt_namespace +
                        "\" is not a namespace name (lowercase letters, digits and '-')");
}

// A default quota (server.quota.*): a count or a size, or unlimited.
template <std::optional<std::int64_t> store::Quota::*Member, bool Bytes>
void set_quota(ServerSettings& s, const Raw& r, const fs::path&) {
  const auto parsed = engine::parse_limit(r.text(r.key), Bytes);
  if (const auto* error = std::get_if<std::string>(&parsed))
    throw SettingsError(r.key + " (" + r.where() + "): " + *error);
  s.default_quota.*Member = std::get<std::int64_t>(parsed);
}

std::string describe_limit(const std::optional<std::int64_t>& value, bool bytes) {
  if (!value || *value < 0) return "unlimited";
  return bytes ? spec::format_binary_size(static_cast<std::uint64_t>(*value))
               : std::to_string(*value);
}

// A setting that is a path (relative ones against the start directory).
template <fs::path ServerSettings::*Member>
void set_path(ServerSettings& s, const Raw& r, const fs::path& cwd) {
  s.*Member = resolve_path(r.key, r, cwd);
}

using Setter = void (*)(ServerSettings&, const Raw&, const fs::path&);

template <std::size_t ServerSettings::*Member, std::size_t Most>
void set_count(ServerSettings& s, const Raw& r, const fs::path&) {
  s.*Member = parse_count(r.key, r, Most);
}

// How each key's text becomes its value.
const std::map<std::string, Setter>& setters() {
  static const std::map<std::string, Setter> table{
      {"server.listen", set_listen},
      {"server.data_dir", set_path<&ServerSettings::data_dir>},
      {"server.libvirt_uri", set_libvirt_uri},
      {"server.domain_type", set_domain_type},
      {"server.stop_timeout",
       [](ServerSettings& s, const Raw& r, const fs::path&) {
         s.stop_timeout = parse_duration("server.stop_timeout", r);
       }},
      {"server.reconcile_interval",
       [](ServerSettings& s, const Raw& r, const fs::path&) {
         s.reconcile_interval = parse_duration("server.reconcile_interval", r, true);
       }},
      {"server.kvm.images_path", set_path<&ServerSettings::images_path>},
      {"server.kvm.cloud_image_path", set_path<&ServerSettings::cloud_image_path>},
      {"server.kvm.base_image_path", set_path<&ServerSettings::base_image_path>},
      {"server.kvm.import_paths", set_import_paths},
      {"server.kvm.max_image_size", set_max_image_size},
      {"server.kvm.resolvers", set_resolvers},
      {"server.kvm.dedicated_cpus", set_dedicated_cpus},
      {"server.external_ports", set_external_ports},
      {"server.external_address", set_external_address},
      {"server.web_root", set_path<&ServerSettings::web_root>},
      {"server.secure_cookies", set_secure_cookies},
      {"server.trusted_proxies", set_trusted_proxies},
      {"server.limits.connections", set_count<&ServerSettings::max_connections, 1'000'000>},
      {"server.limits.sockets_per_user", set_count<&ServerSettings::max_sockets_per_user, 100'000>},
      {"server.limits.streams_per_user", set_count<&ServerSettings::max_streams_per_user, 100'000>},
      {"server.limits.slow_requests_per_user",
       set_count<&ServerSettings::max_slow_requests_per_user, 100'000>},
      {"server.limits.connections_per_address",
       set_count<&ServerSettings::max_connections_per_address, 1'000'000>},
      {"server.retention.events",
       [](ServerSettings& s, const Raw& r, const fs::path&) {
         s.event_retention = parse_retention("server.retention.events", r);
       }},
      {"server.retention.operations",
       [](ServerSettings& s, const Raw& r, const fs::path&) {
         s.operation_retention = parse_retention("server.retention.operations", r);
       }},
      {"server.stats.interval",
       [](ServerSettings& s, const Raw& r, const fs::path&) {
         s.stats_interval = parse_duration("server.stats.interval", r, true);
       }},
      {"server.stats.history", set_stats_history},
      {"server.idle.suspend_after",
       [](ServerSettings& s, const Raw& r, const fs::path&) {
         s.idle_suspend_after = parse_duration("server.idle.suspend_after", r, true);
       }},
      {"server.idle.cpu_percent",
       [](ServerSettings& s, const Raw& r, const fs::path&) {
         s.idle_cpu_percent = static_cast<unsigned>(parse_count("server.idle.cpu_percent", r, 100));
       }},
      {"server.idle.trim_guest_cache", set_trim_guest_cache},
      {"server.kvm.guest_filter", set_guest_filter},
      {"server.tls.cert", set_path<&ServerSettings::tls_cert>},
      {"server.tls.key", set_path<&ServerSettings::tls_key>},
      {"server.tls.mode", set_tls_mode},
      {"server.kubevirt.name", set_kubevirt_name},
      {"server.kubevirt.kubeconfig", set_path<&ServerSettings::kubevirt_kubeconfig>},
      {"server.kubevirt.context",
       [](ServerSettings& s, const Raw& r, const fs::path&) {
         s.kubevirt_context = util::trim(r.text("server.kubevirt.context"));
       }},
      {"server.kubevirt.namespace", set_kubevirt_namespace},
      {"server.quota.spaces", set_quota<&store::Quota::spaces, false>},
      {"server.quota.cpus", set_quota<&store::Quota::cpus, false>},
      {"server.quota.memory", set_quota<&store::Quota::memory, true>},
      {"server.quota.disk", set_quota<&store::Quota::disk, true>},
  };
  return table;
}

}  // namespace

ServerSettings resolve_settings(const SettingsInput& input) {
  ServerSettings s;
  auto raw = given_values(input, s);
  for (const auto& k : setting_keys()) {
    const auto it = raw.find(k.key);
    if (it == raw.end()) {
      s.sources[k.key] = SettingSource::Default;
      s.origins[k.key] = "default";
      continue;
    }
    auto& value = it->second;
    value.key = k.key;
    s.sources[k.key] = value.source;
    s.origins[k.key] = value.origin + (value.ignored.empty() ? "" : "; " + value.ignored);
    setters().at(k.key)(s, value, input.cwd);
  }
  check_tls(s, raw);
  if (!s.external_address.empty() && s.external_address != "any" &&
      api::split_listen_address(s.listen).first == s.external_address)
    throw SettingsError("server.external_address (" + s.origins["server.external_address"] +
                        ") is the web UI's address (server.listen): guests' ports there would "
                        "receive its session cookies; name another address of this host");
  if (s.stats_interval.count() > 0 && s.stats_history < s.stats_interval)
    throw SettingsError("server.stats.history (" + s.origins["server.stats.history"] +
                        ") is shorter than server.stats.interval (" +
                        s.origins["server.stats.interval"] + "): keep one interval at least");
  // Paths that follow the images path unless set.
  if (!raw.count("server.kvm.cloud_image_path"))
    s.cloud_image_path = s.images_path / "cloud-images";
  if (!raw.count("server.kvm.base_image_path")) s.base_image_path = s.images_path / "base";
  if (!raw.count("server.web_root")) s.web_root = BOWLINE_WEB_ROOT_DEFAULT;
  return s;
}

namespace {

// The server.limits.* values, as describe_settings shows them.
void describe_limits(const ServerSettings& s, std::map<std::string, std::string>& values) {
  values["server.limits.connections"] = std::to_string(s.max_connections);
  values["server.limits.sockets_per_user"] = std::to_string(s.max_sockets_per_user);
  values["server.limits.streams_per_user"] = std::to_string(s.max_streams_per_user);
  values["server.limits.slow_requests_per_user"] = std::to_string(s.max_slow_requests_per_user);
  values["server.limits.connections_per_address"] = std::to_string(s.max_connections_per_address);
}

}  // namespace

std::string describe_settings(const ServerSettings& s) {
  std::string cpus;
  for (auto c : s.dedicated_cpus) cpus += (cpus.empty() ? "" : ",") + std::to_string(c);
  std::string resolvers;
  for (const auto& r : s.resolvers) resolvers += (resolvers.empty() ? "" : ",") + r;
  std::string imports;
  for (const auto& p : s.import_paths) imports += (imports.empty() ? "" : ",") + p.string();
  std::string proxies;
  for (const auto& p : s.trusted_proxies) proxies += (proxies.empty() ? "" : ",") + p.to_string();
  std::map<std::string, std::string> values{
      {"server.listen", s.listen},
      {"server.data_dir", s.data_dir.string()},
      {"server.libvirt_uri", s.libvirt_uri},
      {"server.domain_type", engine::to_string(s.domain_type)},
      {"server.stop_timeout", std::to_string(s.stop_timeout.count()) + "s"},
      {"server.reconcile_interval", std::to_string(s.reconcile_interval.count()) + "s"},
      {"server.kvm.images_path", s.images_path.string()},
      {"server.kvm.cloud_image_path", s.cloud_image_path.string()},
      {"server.kvm.base_image_path", s.base_image_path.string()},
      {"server.kvm.import_paths", imports},
      {"server.kvm.max_image_size", spec::format_binary_size(s.max_image_size)},
      {"server.kvm.resolvers", resolvers},
      {"server.kvm.dedicated_cpus", cpus},
      {"server.kvm.guest_filter", to_string(s.guest_filter)},
      {"server.external_ports",
       std::to_string(s.external_port_first) + "-" + std::to_string(s.external_port_last)},
      {"server.external_address", s.external_address.empty()
                                      ? std::string("(none: no port is published)")
                                      : s.external_address},
      {"server.web_root", s.web_root.string()},
      {"server.secure_cookies",
       s.secure_cookies ? (*s.secure_cookies ? "true" : "false") : std::string("auto")},
      {"server.trusted_proxies", proxies.empty() ? std::string("(none)") : proxies},
      {"server.retention.events", std::to_string(s.event_retention.count()) + "h"},
      {"server.retention.operations", std::to_string(s.operation_retention.count()) + "h"},
      {"server.stats.interval", std::to_string(s.stats_interval.count()) + "s"},
      {"server.stats.history", std::to_string(s.stats_history.count()) + "s"},
      {"server.idle.suspend_after", std::to_string(s.idle_suspend_after.count()) + "s"},
      {"server.idle.cpu_percent", std::to_string(s.idle_cpu_percent)},
      {"server.idle.trim_guest_cache", s.idle_trim_guest_cache ? "true" : "false"},
      {"server.tls.cert", s.tls_cert.empty() ? std::string("(none)") : s.tls_cert.string()},
      {"server.tls.key", s.tls_key.empty() ? std::string("(none)") : s.tls_key.string()},
      {"server.tls.mode", to_string(s.tls_mode)},
      {"server.kubevirt.name", s.kubevirt_name},
      {"server.kubevirt.kubeconfig", s.kubevirt_kubeconfig.empty()
                                         ? std::string("($KUBECONFIG, else ~/.kube/config)")
                                         : s.kubevirt_kubeconfig.string()},
      {"server.kubevirt.context",
       s.kubevirt_context.empty() ? std::string("(current-context)") : s.kubevirt_context},
      {"server.kubevirt.namespace", s.kubevirt_namespace},
      {"server.quota.spaces", describe_limit(s.default_quota.spaces, false)},
      {"server.quota.cpus", describe_limit(s.default_quota.cpus, false)},
      {"server.quota.memory", describe_limit(s.default_quota.memory, true)},
      {"server.quota.disk", describe_limit(s.default_quota.disk, true)},
  };
  describe_limits(s, values);
  std::size_t key_width = 0, value_width = 0;
  for (const auto& [key, value] : values) {
    key_width = std::max(key_width, key.size());
    value_width = std::max(value_width, value.size());
  }
  std::string out = "config file: " +
                    (s.config_file ? s.config_file->string() + " (" + s.config_file_source + ")"
                                   : std::string("none")) +
                    "\n";
  for (const auto& k : setting_keys()) {
    const std::string key = k.key;
    const auto& value = values.at(key);
    const auto source_it = s.sources.find(key);
    const auto source = source_it == s.sources.end() ? SettingSource::Default : source_it->second;
    const auto origin_it = s.origins.find(key);
    std::string from = to_string(source);
    if (source != SettingSource::Default && origin_it != s.origins.end())
      from += " (" + origin_it->second + ")";
    out += key + std::string(key_width - key.size() + 2, ' ') + value +
           std::string(value_width - value.size() + 2, ' ') + from + "\n";
  }
  return out;
}

std::map<std::string, std::string> process_environment() {
  std::map<std::string, std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    out[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return out;
}

}  // namespace bowline::server
