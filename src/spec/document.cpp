#include "spec/document.hpp"

#include <map>

namespace bowline::spec {
namespace {

// Bounds that keep hostile documents (deep nesting, alias bombs) cheap to reject.
constexpr int kMaxDepth = 64;
constexpr std::size_t kMaxNodes = 100000;
constexpr std::size_t kMaxBytes = 1 << 20;

std::string child_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

}  // namespace

Document::Document(std::string text, Diagnostics& diagnostics) : text_(std::move(text)) {
  if (text_.size() > kMaxBytes) {
    diagnostics.error(0, 0, "", "the template is larger than 1 MiB");
    return;
  }
  try {
    root_ = YAML::Load(text_);
  } catch (const YAML::Exception& e) {
    const int line = e.mark.line >= 0 ? e.mark.line + 1 : 0;
    const int column = e.mark.column >= 0 ? e.mark.column + 1 : 0;
    diagnostics.error(line, column, "", "YAML syntax: " + e.msg);
    root_ = YAML::Node();
    return;
  }
  if (!root_.IsDefined() || root_.IsNull()) {
    diagnostics.error(
        1, 1, "", "the template is empty: it must be a mapping of fields (image, network, ...)");
    return;
  }
  if (!root_.IsMap()) {
    const auto p = position(root_);
    diagnostics.error(p.line, p.column, "",
                      "the template must be a mapping of fields (image, network, ...)");
    return;
  }
  std::size_t visited = 0;
  check_keys(root_, "", 0, visited, diagnostics);
  ok_ = true;
}

void Document::check_keys(const YAML::Node& node, const std::string& path, int depth,
                          std::size_t& visited, Diagnostics& diagnostics) {
  if (++visited > kMaxNodes || depth > kMaxDepth) {
    if (visited == kMaxNodes + 1 || depth == kMaxDepth + 1) {
      const auto p = position(node);
      diagnostics.error(p.line, p.column, path, "the document is nested or aliased too deeply");
    }
    return;
  }
  if (node.IsMap()) {
    std::map<std::string, YAML::Node> seen;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node& key = it->first;
      const auto kp = position(key);
      if (!key.IsScalar()) {
        diagnostics.error(kp.line, kp.column, path, "keys must be plain strings");
        continue;
      }
      const auto name = key.Scalar();
      if (name == "<<" && is_plain_scalar(key)) {
        diagnostics.error(kp.line, kp.column, child_path(path, name),
                          "YAML merge keys (<<) are not supported: write the fields out");
        continue;
      }
      if (auto [prior, inserted] = seen.emplace(name, key); !inserted) {
        diagnostics.error(kp.line, kp.column, child_path(path, name),
                          "duplicate key (first at line " +
                              std::to_string(position(prior->second).line) +
                              "): YAML readers disagree on which one wins, so say it once");
        continue;
      }
      check_keys(it->second, child_path(path, name), depth + 1, visited, diagnostics);
    }
  } else if (node.IsSequence()) {
    std::size_t i = 0;
    for (const auto& item : node)
      check_keys(item, path + "[" + std::to_string(i++) + "]", depth + 1, visited, diagnostics);
  }
}

Position Document::position(const YAML::Node& node) const {
  const auto mark = node.Mark();
  if (mark.line < 0) return {};
  return {mark.line + 1, mark.column + 1};
}

Position Document::position_of_offset(std::size_t offset) const {
  Position p{1, 1};
  for (std::size_t i = 0; i < offset && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

Position Document::expression_position(const YAML::Node& scalar, std::size_t expression,
                                       std::size_t offset) const {
  const auto mark = scalar.Mark();
  if (mark.pos < 0) return position(scalar);
  // The expression appears verbatim in the source after the scalar's start.
  std::size_t at = static_cast<std::size_t>(mark.pos);
  for (std::size_t k = 0;; ++k) {
    at = text_.find("${{", at);
    if (at == std::string::npos) return position(scalar);
    if (k == expression) break;
    at += 3;
  }
  return position_of_offset(at + offset);
}

}  // namespace bowline::spec
