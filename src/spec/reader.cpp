#include "spec/reader.hpp"

#include "spec/quantity.hpp"
#include "util/strings.hpp"

namespace bowline::spec {
namespace {

const char* kind_of(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a single value";
    default:
      return "nothing";
  }
}

}  // namespace

std::string index_path(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string field_path(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

void Reader::report(Severity severity, const YAML::Node& at, const std::string& path,
                    std::string message) {
  const auto p = at.IsDefined() ? document_.position(at) : Position{1, 1};
  diagnostics_.add({severity, p.line, p.column, path, std::move(message)});
}

void Reader::error(const YAML::Node& at, const std::string& path, std::string message) {
  report(Severity::Error, at, path, std::move(message));
}

void Reader::warning(const YAML::Node& at, const std::string& path, std::string message) {
  report(Severity::Warning, at, path, std::move(message));
}

YAML::Node Reader::key_of(const YAML::Node& map, std::string_view key) {
  if (map.IsDefined() && map.IsMap())
    for (auto it = map.begin(); it != map.end(); ++it)
      if (it->first.IsScalar() && it->first.Scalar() == key) return it->first;
  return map;
}

bool Reader::mapping(const YAML::Node& node, const std::string& path,
                     const std::vector<std::string_view>& allowed) {
  if (!node.IsMap()) {
    error(node, path, std::string("expected a mapping, got ") + kind_of(node));
    return false;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar()) continue;  // reported by Document
    const auto key = it->first.Scalar();
    bool known = false;
    for (auto a : allowed) known = known || a == key;
    // A plain << is a merge key, reported by Document; a quoted "<<" is an ordinary key.
    if (known || (key == "<<" && is_plain_scalar(it->first))) continue;
    const auto hint = util::nearest(key, allowed);
    error(it->first, field_path(path, key),
          "unknown field" + (hint.empty() ? std::string() : " (did you mean " + hint + "?)"));
  }
  return true;
}

bool Reader::sequence(const YAML::Node& node, const std::string& path) {
  if (node.IsSequence()) return true;
  error(node, path, std::string("expected a list, got ") + kind_of(node));
  return false;
}

std::optional<Scalar> Reader::scalar(const YAML::Node& node, const std::string& path,
                                     bool literal_only, bool* unknown, Into into) {
  if (absent(node)) return std::nullopt;
  if (!node.IsScalar()) {
    error(node, path, std::string("expected a single value, got ") + kind_of(node));
    return std::nullopt;
  }
  const auto& raw = node.Scalar();
  if (literal_only) {
    if (raw.find("${{") != std::string::npos) {
      error(node, path, "must be a literal value: template variables are not expanded here");
      return std::nullopt;
    }
    return Scalar{raw, !is_plain_scalar(node), node};
  }
  auto expansion = expand(raw, values_, into);
  for (const auto& e : expansion.errors) {
    const auto p = document_.expression_position(node, e.expression, e.offset);
    diagnostics_.error(p.line, p.column, path, e.message);
  }
  if (!expansion.errors.empty()) return std::nullopt;
  if (!expansion.value) {
    if (unknown) *unknown = true;
    return std::nullopt;
  }
  return Scalar{std::move(*expansion.value), !is_plain_scalar(node) || expansion.templated, node};
}

std::optional<std::string> Reader::string(const YAML::Node& node, const std::string& path,
                                          bool* unknown) {
  auto s = scalar(node, path, false, unknown);
  if (!s) return std::nullopt;
  return std::move(s->text);
}

std::optional<bool> Reader::boolean(const YAML::Node& node, const std::string& path) {
  auto s = scalar(node, path, true);
  if (!s) return std::nullopt;
  if (!s->quoted) {
    if (s->text == "true" || s->text == "True" || s->text == "TRUE") return true;
    if (s->text == "false" || s->text == "False" || s->text == "FALSE") return false;
  }
  error(node, path,
        "expected true or false, got " + std::string(s->quoted ? "the string \"" : "\"") + s->text +
            "\"");
  return std::nullopt;
}

std::optional<std::uint64_t> Reader::whole_number(const YAML::Node& node, const std::string& path,
                                                  std::uint64_t max) {
  auto s = scalar(node, path);
  if (!s) return std::nullopt;
  auto parsed = parse_whole_number(s->text, max);
  if (!parsed.ok()) {
    error(node, path, parsed.error());
    return std::nullopt;
  }
  return parsed.value();
}

std::optional<std::string> Reader::choice(const YAML::Node& node, const std::string& path,
                                          const std::vector<std::string_view>& choices) {
  auto s = scalar(node, path);
  if (!s) return std::nullopt;
  for (auto c : choices)
    if (c == s->text) return s->text;
  std::string list;
  for (auto c : choices) list += (list.empty() ? "" : ", ") + std::string(c);
  const auto hint = util::nearest(s->text, choices);
  error(node, path,
        "\"" + s->text + "\" is not one of " + list +
            (hint.empty() ? "" : " (did you mean " + hint + "?)"));
  return std::nullopt;
}

}  // namespace bowline::spec
