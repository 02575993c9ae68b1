// Internal to spec/: typed access to a template's YAML nodes, with `${{ }}` expansion and
// diagnostics pinned to positions and field paths.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/document.hpp"
#include "spec/expand.hpp"

namespace bowline::spec {

struct Scalar {
  std::string text;
  bool quoted = false;
  YAML::Node node;
};

class Reader {
 public:
  Reader(const Document& document, const Variables* values, Diagnostics& diagnostics)
      : document_(document), values_(values), diagnostics_(diagnostics) {}

  const Document& document() const { return document_; }
  bool has_values() const { return values_ != nullptr; }

  void error(const YAML::Node& at, const std::string& path, std::string message);
  void warning(const YAML::Node& at, const std::string& path, std::string message);

  // True when `node` is absent or null (`key:` with nothing after it).
  static bool absent(const YAML::Node& node) { return !node.IsDefined() || node.IsNull(); }
  // Absent, or the empty string: what Cozystack's values write for "the default" (cpuModel: "",
  // firmware.bootloader: "", disks[].bus: "", resources.cpu: "", cloudInit: "").
  static bool blank(const YAML::Node& node) {
    return absent(node) || (node.IsScalar() && node.Scalar().empty());
  }

  // The key `key` of `map` itself, to point at `key:` when its value is null (yaml-cpp marks a
  // null value where the next token starts, often the line after); `map` when there is none.
  static YAML::Node key_of(const YAML::Node& map, std::string_view key);

  // Reports keys outside `allowed` (with a suggestion); false if `node` is not a mapping.
  bool mapping(const YAML::Node& node, const std::string& path,
               const std::vector<std::string_view>& allowed);
  // False (with an error) if `node` is not a sequence.
  bool sequence(const YAML::Node& node, const std::string& path);

  // A scalar's text after expansion. Empty when absent, not a scalar (reported), invalid
  // (reported) or depending on values not given (not an error: `unknown` is set).
  std::optional<Scalar> scalar(const YAML::Node& node, const std::string& path,
                               bool literal_only = false, bool* unknown = nullptr,
                               Into into = Into::Value);
  std::optional<std::string> string(const YAML::Node& node, const std::string& path,
                                    bool* unknown = nullptr);
  std::optional<bool> boolean(const YAML::Node& node, const std::string& path);
  // A positive whole number up to `max`; quoted text is accepted unless `plain_only`.
  std::optional<std::uint64_t> whole_number(const YAML::Node& node, const std::string& path,
                                            std::uint64_t max);
  // One of `choices`, exactly.
  std::optional<std::string> choice(const YAML::Node& node, const std::string& path,
                                    const std::vector<std::string_view>& choices);

 private:
  void report(Severity severity, const YAML::Node& at, const std::string& path,
              std::string message);

  const Document& document_;
  const Variables* values_;
  Diagnostics& diagnostics_;
};

std::string index_path(const std::string& path, std::size_t i);
std::string field_path(const std::string& path, std::string_view key);

}  // namespace bowline::spec
