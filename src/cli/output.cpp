#include "cli/output.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>

namespace bowline::cli {
namespace {

void emit(YAML::Emitter& out, const nlohmann::ordered_json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::object:
      out << YAML::BeginMap;
      for (auto it = value.begin(); it != value.end(); ++it) {
        out << YAML::Key << it.key() << YAML::Value;
        emit(out, it.value());
      }
      out << YAML::EndMap;
      break;
    case nlohmann::json::value_t::array:
      if (value.empty()) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const auto& item : value) emit(out, item);
      out << YAML::EndSeq;
      break;
    case nlohmann::json::value_t::string: {
      const auto& s = value.get_ref<const std::string&>();
      // A literal block reads back with exactly one final newline ("clip"), so only text
      // that ends that way keeps its shape in one; everything else is double-quoted.
      const bool block = s.size() > 1 && s.back() == '\n' && s[s.size() - 2] != '\n' &&
                         s.front() != ' ' && s.find_first_of("\r\t") == std::string::npos;
      if (block)
        out << YAML::Literal << s;
      else
        out << YAML::DoubleQuoted << s;
      break;
    }
    case nlohmann::json::value_t::boolean:
      out << value.get<bool>();
      break;
    case nlohmann::json::value_t::null:
      out << YAML::Null;
      break;
    default:
      out << value.dump();
      break;  // numbers
  }
}

}  // namespace

std::string to_yaml(const nlohmann::ordered_json& value) {
  YAML::Emitter out;
  out.SetNullFormat(YAML::LowerNull);
  out.SetBoolFormat(YAML::TrueFalseBool);
  emit(out, value);
  return std::string(out.c_str()) + "\n";
}

std::string format_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths;
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (widths.size() <= i) widths.push_back(0);
      widths[i] = std::max(widths[i], row[i].size());
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace bowline::cli
