#include "kubevirt/yaml_stream.hpp"

#include <yaml-cpp/yaml.h>

#include <array>
#include <stdexcept>
#include <string_view>

#include "util/strings.hpp"

namespace bowline::kubevirt {
namespace {

bool plain_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '/' || c == '+' || c == '@' || c == '=';
}

// Conservative: a letter or '/' first, then a small set of characters, and none of the words
// YAML 1.1 reads as booleans or null (yes, no, on, off, y, n, ...).
bool safe_plain(std::string_view s) {
  if (s.empty()) return false;
  const char first = s.front();
  if (!((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z') || first == '/'))
    return false;
  for (char c : s)
    if (!plain_char(c)) return false;
  static constexpr std::array<std::string_view, 11> kWords = {
      "y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf"};
  const auto lower = util::to_lower(s);
  for (auto word : kWords)
    if (lower == word) return false;
  return true;
}

void emit(YAML::Emitter& out, const nlohmann::ordered_json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::object:
      if (value.empty()) {  // `{}` on the key's line rather than a block of its own
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        break;
      }
      out << YAML::BeginMap;
      for (const auto& [key, item] : value.items()) {
        out << YAML::Key;
        if (safe_plain(key))
          out << key;
        else
          out << YAML::DoubleQuoted << key;
        out << YAML::Value;
        emit(out, item);
      }
      out << YAML::EndMap;
      break;
    case nlohmann::json::value_t::array:
      if (value.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        break;
      }
      out << YAML::BeginSeq;
      for (const auto& item : value) emit(out, item);
      out << YAML::EndSeq;
      break;
    case nlohmann::json::value_t::string: {
      const auto& s = value.get_ref<const std::string&>();
      if (safe_plain(s))
        out << s;
      else
        out << YAML::DoubleQuoted << s;
      break;
    }
    case nlohmann::json::value_t::boolean:
      out << value.get<bool>();
      break;
    case nlohmann::json::value_t::number_unsigned:
      out << value.get<std::uint64_t>();
      break;
    case nlohmann::json::value_t::number_integer:
      out << value.get<std::int64_t>();
      break;
    case nlohmann::json::value_t::null:
      out << YAML::Null;
      break;
    default:
      // Manifests hold no floating-point numbers; a float here is a bug in the renderer.
      throw std::logic_error("to_yaml: unsupported JSON value " + value.dump());
  }
}

}  // namespace

std::string to_yaml(const nlohmann::ordered_json& value) {
  YAML::Emitter out;
  out.SetIndent(2);
  out << YAML::Block;
  emit(out, value);
  if (!out.good()) throw std::logic_error("yaml-cpp: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

std::string to_yaml_stream(const std::vector<nlohmann::ordered_json>& objects) {
  std::string stream;
  for (const auto& object : objects) stream += "---\n" + to_yaml(object);
  return stream;
}

}  // namespace bowline::kubevirt
