// A setting's value as given (from a flag, the environment, the config file or the table's
// default) before it is checked, and the parsers that check it: what the rows of
// setting_table() (settings_table.cpp) call. Internal to server/.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "server/settings.hpp"

namespace bowline::server {

struct SettingValue {
  std::vector<std::string> items;  // one item, or a list (a YAML sequence in the file)
  bool list = false;
  SettingSource source = SettingSource::Default;
  std::string origin;         // "--listen", "BOWLINE_LISTEN", "FILE:LINE"
  std::string ignored;        // another spelling that was set too and lost: "KNOT_KVM_... also set"
  std::string key;            // the setting's key, set before its row parses the value
  std::filesystem::path cwd;  // where the server starts: relative paths resolve against it

  // "flag --listen", "environment variable BOWLINE_LISTEN", "FILE:LINE" or "default".
  std::string where() const;
  // The single value; a list is a SettingsError.
  const std::string& text() const;
  // "server.listen (flag --listen): " + message, for errors.
  SettingsError error(const std::string& message) const;
};

// The table's rows of a team's server (settings_table_team.cpp), after `table`'s.
std::vector<Setting> with_team_settings(std::vector<Setting> table);

// Each parser trims the text and throws a SettingsError that names the key and where the
// value came from.
namespace parse {

std::string word(const SettingValue& v);  // trimmed, any text (empty too)
std::string listen_address(const SettingValue& v);
std::string libvirt_uri(const SettingValue& v);
// Relative paths resolve against the directory the server starts in.
std::filesystem::path path(const SettingValue& v);
std::vector<std::filesystem::path> import_paths(const SettingValue& v);  // not /
// 60, 90s, 2m, 12h, 7d; zero only where `zero_allowed`.
std::chrono::seconds duration(const SettingValue& v, bool zero_allowed = false);
std::chrono::hours retention(const SettingValue& v);         // a duration of an hour at least
std::chrono::seconds stats_history(const SettingValue& v);   // a duration of a day at most
std::size_t count(const SettingValue& v, std::size_t most);  // 1 to `most`
bool boolean(const SettingValue& v);                         // true | false
std::optional<bool> secure_cookies(const SettingValue& v);   // auto (nullopt) | true | false
std::uint64_t image_size(const SettingValue& v);             // a size above 0
std::vector<std::string> resolvers(const SettingValue& v);   // IP addresses, at least one
std::vector<unsigned> cpu_list(const SettingValue& v);       // empty: none
std::pair<std::uint16_t, std::uint16_t> port_range(const SettingValue& v);
std::string external_address(const SettingValue& v);  // empty, any or a routable IPv4 address
std::vector<spec::Ipv4Network> networks(const SettingValue& v);
engine::DomainTypeSetting domain_type(const SettingValue& v);
GuestFilter guest_filter(const SettingValue& v);
TlsMode tls_mode(const SettingValue& v);
std::string node_name(const SettingValue& v);           // a DNS label but local; empty: none
std::string namespace_name(const SettingValue& v);      // a DNS label
std::string dns_name(const SettingValue& v);            // empty, or DNS labels joined by dots
std::string public_url(const SettingValue& v);          // empty, or http(s)://HOST[:PORT]
std::string issuer_url(const SettingValue& v);          // empty, or https://... (http on loopback)
std::vector<std::string> words(const SettingValue& v);  // a list, each without spaces
// GROUP=PERMISSION+PERMISSION,...: what each group gives.
std::map<std::string, std::set<store::Permission>> group_permissions(const SettingValue& v);
// A quota's limit: a count (or a size, when `bytes`) or unlimited (-1).
std::int64_t limit(const SettingValue& v, bool bytes);

}  // namespace parse

// How --print-config shows values that are not plain text.
namespace show {

std::string seconds(std::chrono::seconds value);                          // "60s"
std::string hours(std::chrono::hours value);                              // "168h"
std::string boolean(bool value);                                          // "true" | "false"
std::string limit(const std::optional<std::int64_t>& value, bool bytes);  // "32Gi", "unlimited"
// The items joined by commas; `none` when there are none.
std::string group_permissions(const std::map<std::string, std::set<store::Permission>>& map);
template <class List, class Text>
std::string list(const List& items, Text text, const std::string& none = "") {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ",") + text(item);
  return out.empty() ? none : out;
}
// The path, or `none` when it is empty.
std::string path_or(const std::filesystem::path& path, const std::string& none);

}  // namespace show

}  // namespace bowline::server
