// The settings as people read them: --print-config's lines and docs/configuration.md's table,
// both from setting_table().
#include <algorithm>

#include "server/settings.hpp"

namespace bowline::server {

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

namespace {

// "default", or "flag (--listen)", "file (FILE:LINE)", ...
std::string where_from(const ServerSettings& s, const std::string& key) {
  const auto source_it = s.sources.find(key);
  const auto source = source_it == s.sources.end() ? SettingSource::Default : source_it->second;
  std::string from = to_string(source);
  const auto origin_it = s.origins.find(key);
  if (source != SettingSource::Default && origin_it != s.origins.end())
    from += " (" + origin_it->second + ")";
  return from;
}

std::string code(const std::string& text) {
  return "`" + text + "`";
}

// bowline's spelling, and knot's beside it where knot has one.
std::string spellings(const char* ours, const char* knots) {
  return code(ours) + (knots ? std::string(" or knot's ") + code(knots) : "");
}

}  // namespace

std::string describe_settings(const ServerSettings& s) {
  std::vector<std::pair<std::string, std::string>> values;
  std::size_t key_width = 0, value_width = 0;
  for (const auto& row : setting_table()) {
    values.emplace_back(row.key, row.show(s));
    key_width = std::max(key_width, values.back().first.size());
    value_width = std::max(value_width, values.back().second.size());
  }
  std::string out = "config file: " +
                    (s.config_file ? s.config_file->string() + " (" + s.config_file_source + ")"
                                   : std::string("none")) +
                    "\n";
  for (const auto& [key, value] : values)
    out += key + std::string(key_width - key.size() + 2, ' ') + value +
           std::string(value_width - value.size() + 2, ' ') + where_from(s, key) + "\n";
  return out;
}

std::string settings_markdown() {
  std::string out =
      "| config file key | flag | environment variable | value | default | what it is |\n"
      "|---|---|---|---|---|---|\n";
  for (const auto& row : setting_table()) {
    const std::string default_text = row.default_doc      ? row.default_doc
                                     : *row.default_value ? code(row.default_value)
                                                          : "none";
    out += "| " + code(row.key) + " | " + spellings(row.flag, row.knot_flag) + " | " +
           spellings(row.env, row.knot_env) + " | " + row.type + " | " + default_text + " | " +
           row.details + " |\n";
  }
  return out;
}

}  // namespace bowline::server
