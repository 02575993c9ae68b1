// The settings' parsers: text as given to a checked value, or a SettingsError that names the
// setting and where its value came from.
#include <arpa/inet.h>

#include <cctype>
#include <initializer_list>

#include "api/http_server.hpp"
#include "engine/placement.hpp"
#include "engine/quota.hpp"
#include "server/settings_value.hpp"
#include "spec/quantity.hpp"
#include "util/strings.hpp"

namespace bowline::server {

namespace fs = std::filesystem;

std::string SettingValue::where() const {
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

const std::string& SettingValue::text() const {
  if (list || items.size() != 1) throw error("expected a single value, not a list");
  return items.front();
}

SettingsError SettingValue::error(const std::string& message) const {
  return SettingsError(key + " (" + where() + "): " + message);
}

namespace {

std::vector<std::string> split_list(const SettingValue& v) {
  std::vector<std::string> out;
  for (const auto& item : v.items)
    for (auto& part : util::split(item, ',')) {
      auto text = util::trim(part);
      if (!text.empty()) out.push_back(std::move(text));
    }
  return out;
}

// A setting that names one of a few words (case and spaces aside): its value for the word,
// or a SettingsError that lists the words.
template <class T>
T one_of(const SettingValue& v, std::initializer_list<std::pair<const char*, T>> words) {
  const auto value = util::to_lower(util::trim(v.text()));
  std::string listed;
  std::size_t i = 0;
  for (const auto& [word, result] : words) {
    if (value == word) return result;
    listed += (i == 0 ? "" : i + 1 == words.size() ? " and " : ", ") + std::string(word);
    ++i;
  }
  throw v.error("\"" + value + "\" is none of " + listed);
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

}  // namespace

namespace parse {

std::string word(const SettingValue& v) {
  return util::trim(v.text());
}

std::string listen_address(const SettingValue& v) {
  auto text = word(v);
  try {
    api::split_listen_address(text);
  } catch (const std::invalid_argument& e) {
    throw v.error(e.what());
  }
  return text;
}

std::string libvirt_uri(const SettingValue& v) {
  auto text = word(v);
  if (text.empty()) throw v.error("the URI is empty");
  return text;
}

fs::path path(const SettingValue& v) {
  const auto& text = v.text();
  if (text.empty()) throw v.error("the path is empty");
  fs::path p(text);
  if (p.is_relative()) p = v.cwd / p;
  return p.lexically_normal();
}

std::vector<fs::path> import_paths(const SettingValue& v) {
  std::vector<fs::path> list;
  for (const auto& part : split_list(v)) {
    fs::path p(part);
    if (p.is_relative()) p = v.cwd / p;
    p = p.lexically_normal();
    if (p == p.root_path()) throw v.error("\"/\" would let an admin name any file of the host");
    list.push_back(std::move(p));
  }
  return list;
}

std::chrono::seconds duration(const SettingValue& v, bool zero_allowed) {
  const auto text = word(v);
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  const auto unit = text.substr(digits);
  long long factor = 0;
  if (unit.empty() || unit == "s") factor = 1;
  if (unit == "m") factor = 60;
  if (unit == "h") factor = 3600;
  if (unit == "d") factor = 86400;
  if (digits == 0 || digits > 9 || factor == 0)
    throw v.error("\"" + text + "\" is not a duration such as 60, 90s, 2m, 12h or 7d");
  const auto seconds = std::stoll(text.substr(0, digits)) * factor;
  if (seconds <= 0 && !zero_allowed) throw v.error("must be more than 0");
  return std::chrono::seconds(seconds);
}

std::chrono::hours retention(const SettingValue& v) {
  const auto seconds = duration(v);
  if (seconds < std::chrono::hours(1)) throw v.error("keep them an hour at least");
  return std::chrono::duration_cast<std::chrono::hours>(seconds);
}

// Each space's ring holds history / interval points: a day at most bounds it.
std::chrono::seconds stats_history(const SettingValue& v) {
  const auto history = duration(v);
  if (history > std::chrono::hours(24)) throw v.error("keep a day at most");
  return history;
}

std::size_t count(const SettingValue& v, std::size_t most) {
  const auto text = word(v);
  if (text.empty() || text.size() > 7 ||
      text.find_first_not_of("0123456789") != std::string::npos || std::stoul(text) == 0 ||
      std::stoul(text) > most)
    throw v.error("\"" + text + "\" is not a number from 1 to " + std::to_string(most));
  return std::stoul(text);
}

bool boolean(const SettingValue& v) {
  const auto value = util::to_lower(word(v));
  if (value != "true" && value != "false")
    throw v.error("\"" + value + "\" is neither true nor false");
  return value == "true";
}

std::optional<bool> secure_cookies(const SettingValue& v) {
  return one_of<std::optional<bool>>(v, {{"auto", std::nullopt}, {"true", true}, {"false", false}});
}

std::uint64_t image_size(const SettingValue& v) {
  const auto parsed = spec::parse_size(word(v));
  if (!parsed.ok()) throw v.error(parsed.error());
  if (parsed.value() == 0) throw v.error("must be more than 0");
  return parsed.value();
}

std::vector<std::string> resolvers(const SettingValue& v) {
  auto list = split_list(v);
  if (list.empty()) throw v.error("the list is empty");
  for (const auto& address : list)
    if (!is_ip_address(address)) throw v.error("\"" + address + "\" is not an IP address");
  return list;
}

std::vector<unsigned> cpu_list(const SettingValue& v) {
  const auto text = word(v);
  if (text.empty()) return {};
  try {
    return engine::parse_cpu_list(text);
  } catch (const std::invalid_argument& e) {
    throw v.error(e.what());
  }
}

std::pair<std::uint16_t, std::uint16_t> port_range(const SettingValue& v) {
  const auto text = word(v);
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
  if (!ok) throw v.error("\"" + text + "\" is not a port range such as 20000-29999");
  return {static_cast<std::uint16_t>(first), static_cast<std::uint16_t>(last)};
}

std::string external_address(const SettingValue& v) {
  const auto text = word(v);
  if (text.empty() || text == "any") return text;
  const auto address = spec::Ipv4Address::parse(text);
  if (!address) throw v.error("\"" + text + "\" is not an IPv4 address (or any)");
  if ((address->value >> 24) == 127 || address->value == 0)
    throw v.error(text +
                  " is not reachable from other hosts; name an address of this host's "
                  "network interfaces");
  return text;
}

std::vector<spec::Ipv4Network> networks(const SettingValue& v) {
  std::vector<spec::Ipv4Network> out;
  for (const auto& part : split_list(v)) {
    auto net = spec::Ipv4Network::parse(part);
    if (!net && spec::Ipv4Address::parse(part)) net = spec::Ipv4Network::parse(part + "/32");
    if (!net) throw v.error("\"" + part + "\" is not an IPv4 network (e.g. 10.0.0.0/8) or address");
    out.push_back(*net);
  }
  return out;
}

engine::DomainTypeSetting domain_type(const SettingValue& v) {
  using engine::DomainTypeSetting;
  return one_of<DomainTypeSetting>(v, {{"auto", DomainTypeSetting::Auto},
                                       {"kvm", DomainTypeSetting::Kvm},
                                       {"qemu", DomainTypeSetting::Qemu}});
}

GuestFilter guest_filter(const SettingValue& v) {
  return one_of<GuestFilter>(v, {{"auto", GuestFilter::Auto},
                                 {"guard", GuestFilter::Guard},
                                 {"nwfilter", GuestFilter::Nwfilter}});
}

TlsMode tls_mode(const SettingValue& v) {
  return one_of<TlsMode>(
      v, {{"auto", TlsMode::Auto}, {"self-signed", TlsMode::SelfSigned}, {"off", TlsMode::Off}});
}

std::string node_name(const SettingValue& v) {
  auto name = word(v);
  if (!name.empty() && !is_dns_label(name))
    throw v.error("\"" + name + "\" is not a node name (lowercase letters, digits and '-')");
  if (name == "local") throw v.error("\"local\" is the libvirt node's name");
  return name;
}

std::string namespace_name(const SettingValue& v) {
  auto name = word(v);
  if (!is_dns_label(name))
    throw v.error("\"" + name + "\" is not a namespace name (lowercase letters, digits and '-')");
  return name;
}

std::string dns_name(const SettingValue& v) {
  auto name = util::to_lower(word(v));
  if (name.empty()) return name;
  bool ok = name.size() <= 253 && name.find('.') != std::string::npos;
  for (const auto& label : util::split(name, '.')) ok = ok && is_dns_label(std::string(label));
  if (!ok)
    throw v.error("\"" + name +
                  "\" is not a DNS name of two labels or more (e.g. preview.example.com)");
  return name;
}

// Where browsers reach the UI: a scheme and an authority, nothing after them (the UI is at /).
std::string public_url(const SettingValue& v) {
  auto url = word(v);
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.empty()) return url;
  const auto scheme_end = url.find("://");
  const auto scheme = scheme_end == std::string::npos ? "" : url.substr(0, scheme_end);
  const auto authority = scheme_end == std::string::npos ? "" : url.substr(scheme_end + 3);
  if ((scheme != "https" && scheme != "http") || authority.empty() ||
      authority.find_first_of("/?#@ ") != std::string::npos)
    throw v.error("\"" + url + "\" is not a web address of the form https://HOST[:PORT] (no path)");
  return url;
}

// The provider's issuer, exactly as its discovery document says it: https, or http only on a
// loopback address (a provider for tests and development on this machine).
std::string issuer_url(const SettingValue& v) {
  const auto url = word(v);
  if (url.empty()) return url;
  const bool https = url.rfind("https://", 0) == 0;
  const bool loopback = url.rfind("http://127.", 0) == 0 || url.rfind("http://localhost", 0) == 0 ||
                        url.rfind("http://[::1]", 0) == 0;
  if ((!https && !loopback) || url.find_first_of(" ?#") != std::string::npos)
    throw v.error("\"" + url + "\" is not an issuer: an https:// URL (http:// only on loopback)");
  return url;
}

std::vector<std::string> words(const SettingValue& v) {
  auto list = split_list(v);
  for (const auto& w : list)
    if (w.find_first_of(" \t=") != std::string::npos)
      throw v.error("\"" + w + "\" is not a name (no spaces or '=')");
  return list;
}

std::map<std::string, std::set<store::Permission>> group_permissions(const SettingValue& v) {
  std::map<std::string, std::set<store::Permission>> out;
  for (const auto& item : split_list(v)) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw v.error("\"" + item + "\" is not GROUP=PERMISSION+PERMISSION");
    auto& set = out[item.substr(0, eq)];
    for (const auto& name : util::split(item.substr(eq + 1), '+')) {
      const auto permission = store::parse_permission(name);
      if (!permission)
        throw v.error("\"" + name + "\" is not a permission (" + store::permission_names() + ")");
      set.insert(*permission);
    }
  }
  return out;
}

std::int64_t limit(const SettingValue& v, bool bytes) {
  const auto parsed = engine::parse_limit(v.text(), bytes);
  if (const auto* error = std::get_if<std::string>(&parsed)) throw v.error(*error);
  return std::get<std::int64_t>(parsed);
}

}  // namespace parse

namespace show {

std::string seconds(std::chrono::seconds value) {
  return std::to_string(value.count()) + "s";
}

std::string hours(std::chrono::hours value) {
  return std::to_string(value.count()) + "h";
}

std::string boolean(bool value) {
  return value ? "true" : "false";
}

std::string limit(const std::optional<std::int64_t>& value, bool bytes) {
  if (!value || *value < 0) return "unlimited";
  return bytes ? spec::format_binary_size(static_cast<std::uint64_t>(*value))
               : std::to_string(*value);
}

std::string path_or(const fs::path& path, const std::string& none) {
  return path.empty() ? none : path.string();
}

std::string group_permissions(const std::map<std::string, std::set<store::Permission>>& map) {
  std::string out;
  for (const auto& [group, permissions] : map) {
    std::string names;
    for (const auto p : permissions)
      names += (names.empty() ? "" : "+") + std::string(store::to_string(p));
    out += (out.empty() ? "" : ",") + group + "=" + names;
  }
  return out.empty() ? "(none)" : out;
}

}  // namespace show

}  // namespace bowline::server
