// Resolving the settings: the config file's values, the environment's over them, the flags'
// over those, each row's default under all; then the checks that span settings.
#include "server/settings.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "api/http_server.hpp"
#include "server/settings_value.hpp"
#include "util/files.hpp"
#include "util/strings.hpp"

extern char** environ;

#ifndef BOWLINE_WEB_ROOT_DEFAULT
#define BOWLINE_WEB_ROOT_DEFAULT "/usr/share/bowline/web"
#endif

namespace bowline::server {

namespace fs = std::filesystem;

namespace {

const Setting* find_setting(const std::string& key) {
  for (const auto& row : setting_table())
    if (key == row.key) return &row;
  return nullptr;
}

void check_known(const std::string& key, const std::string& where) {
  if (find_setting(key)) return;
  std::vector<std::string_view> keys;
  for (const auto& row : setting_table()) keys.emplace_back(row.key);
  const auto near = util::nearest(key, keys);
  throw SettingsError(where + ": unknown setting " + key +
                      (near.empty() ? std::string() : " (did you mean " + near + "?)"));
}

// A section is what some setting's key starts with (server, server.kvm, server.limits, ...).
bool is_section(const std::string& key) {
  const auto& table = setting_table();
  return std::any_of(table.begin(), table.end(), [&](const Setting& row) {
    return std::string_view(row.key).rfind(key + ".", 0) == 0;
  });
}

// The file's value of one key, or nullopt for "key:" with nothing (as if absent).
std::optional<SettingValue> file_value(const YAML::Node& value, const std::string& key,
                                       const std::string& where) {
  SettingValue v;
  v.source = SettingSource::File;
  v.origin = where;
  if (value.IsSequence()) {
    v.list = true;
    for (const auto& item : value) {
      // A mapping (a server.nodes entry) goes on as flow YAML, for its row's parser.
      if (item.IsMap()) {
        YAML::Emitter flow;
        flow << YAML::Flow << item;
        v.items.emplace_back(flow.c_str());
        continue;
      }
      if (!item.IsScalar()) throw SettingsError(where + ": " + key + ": expected a list of values");
      v.items.push_back(item.as<std::string>());
    }
  } else if (value.IsScalar()) {
    v.items.push_back(value.as<std::string>());
  } else if (value.IsNull()) {
    return std::nullopt;
  } else {
    throw SettingsError(where + ": " + key + ": expected a value");
  }
  return v;
}

void flatten(const YAML::Node& node, const std::string& prefix, const std::string& file,
             std::map<std::string, SettingValue>& out) {
  for (const auto& entry : node) {
    const auto name = entry.first.as<std::string>();
    const auto key = prefix.empty() ? name : prefix + "." + name;
    const auto where = file + ":" + std::to_string(entry.first.Mark().line + 1);
    if (entry.second.IsMap()) {
      if (!is_section(key)) check_known(key, where);
      flatten(entry.second, key, file, out);
      continue;
    }
    check_known(key, where);
    if (auto v = file_value(entry.second, key, where)) out[key] = std::move(*v);
  }
}

std::map<std::string, SettingValue> read_config_file(const fs::path& file) {
  const auto text = util::read_file(file.string());
  if (!text) throw SettingsError("cannot read the config file " + file.string());
  YAML::Node root;
  try {
    root = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    throw SettingsError(file.string() + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  std::map<std::string, SettingValue> out;
  if (root.IsNull()) return out;
  if (!root.IsMap())
    throw SettingsError(file.string() + ": expected a mapping with a server: section");
  flatten(root, "", file.string(), out);
  return out;
}

// The config file: --config, else BOWLINE_CONFIG; none: no file.
std::map<std::string, SettingValue> file_values(const SettingsInput& input, ServerSettings& s) {
  std::optional<fs::path> file = input.config_file;
  if (file) {
    s.config_file_source = "--config";
  } else if (auto it = input.env.find("BOWLINE_CONFIG");
             it != input.env.end() && !it->second.empty()) {
    file = it->second;
    s.config_file_source = "BOWLINE_CONFIG";
  }
  if (!file) return {};
  if (file->is_relative()) file = (input.cwd / *file).lexically_normal();
  s.config_file = file;
  return read_config_file(*file);
}

// The environment's values over `given`: bowline's spelling over knot's (an empty variable
// counts as not set).
void add_env_values(const SettingsInput& input, std::map<std::string, SettingValue>& given) {
  const auto env_value = [&](const char* name) -> const std::string* {
    if (!name) return nullptr;
    const auto it = input.env.find(name);
    return it == input.env.end() || it->second.empty() ? nullptr : &it->second;
  };
  for (const auto& row : setting_table()) {
    const auto* ours = env_value(row.env);
    const auto* knots = env_value(row.knot_env);
    if (!ours && !knots) continue;
    SettingValue v;
    v.source = SettingSource::Env;
    v.origin = ours ? row.env : row.knot_env;
    v.items = {ours ? *ours : *knots};
    if (ours && knots) v.ignored = std::string(row.knot_env) + " also set, ignored";
    given[row.key] = std::move(v);
  }
}

void add_flag_values(const SettingsInput& input, std::map<std::string, SettingValue>& given) {
  for (const auto& [key, value] : input.flags) {
    check_known(key, "command line");
    SettingValue v;
    v.source = SettingSource::Flag;
    v.origin = find_setting(key)->flag;
    if (const auto it = input.flag_spellings.find(key); it != input.flag_spellings.end())
      v.origin = it->second;
    v.items = {value};
    given[key] = std::move(v);
  }
}

// A certificate needs its key and the other way round; a mode that makes or refuses one
// cannot go with one given.
void check_tls(const ServerSettings& s, const std::map<std::string, SettingValue>& given) {
  const auto where = [&](const char* key) {
    return std::string(key) + " (" + given.at(key).where() + ")";
  };
  const bool cert = given.count("server.tls.cert"), key = given.count("server.tls.key");
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

// The checks that span settings, and the defaults that follow another setting.
void check_and_derive(ServerSettings& s, const std::map<std::string, SettingValue>& given) {
  check_tls(s, given);
  if (!s.external_address.empty() && s.external_address != "any" &&
      api::split_listen_address(s.listen).first == s.external_address)
    throw SettingsError("server.external_address (" + s.origins["server.external_address"] +
                        ") is the web UI's address (server.listen): guests' ports there would "
                        "receive its session cookies; name another address of this host");
  if (s.stats_interval.count() > 0 && s.stats_history < s.stats_interval)
    throw SettingsError("server.stats.history (" + s.origins["server.stats.history"] +
                        ") is shorter than server.stats.interval (" +
                        s.origins["server.stats.interval"] + "): keep one interval at least");
  if (!given.count("server.kvm.cloud_image_path"))
    s.cloud_image_path = s.images_path / "cloud-images";
  if (!given.count("server.kvm.base_image_path")) s.base_image_path = s.images_path / "base";
  if (!given.count("server.web_root")) s.web_root = BOWLINE_WEB_ROOT_DEFAULT;
}

}  // namespace

ServerSettings resolve_settings(const SettingsInput& input) {
  ServerSettings s;
  auto given = file_values(input, s);
  add_env_values(input, given);
  add_flag_values(input, given);
  for (const auto& row : setting_table()) {
    const auto it = given.find(row.key);
    SettingValue value;  // the row's default unless given
    if (it != given.end()) {
      value = it->second;
    } else {
      if (*row.default_value == '\0') {
        s.sources[row.key] = SettingSource::Default;
        s.origins[row.key] = "default";
        continue;
      }
      value.items = {row.default_value};
    }
    value.key = row.key;
    value.cwd = input.cwd;
    s.sources[row.key] = value.source;
    s.origins[row.key] = value.source == SettingSource::Default
                             ? "default"
                             : value.origin + (value.ignored.empty() ? "" : "; " + value.ignored);
    row.set(s, value);
  }
  check_and_derive(s, given);
  return s;
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
