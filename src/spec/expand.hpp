// `${{ }}` expressions in template values: `${{ .user.username }}`, `${{ toLower .space.name }}`,
// `${{ .var.region | toUpper }}`. Expansion works on one scalar value at a time, after the YAML
// is parsed, so a value can never change the document's structure (a username with a newline
// or a colon stays data).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bowline::spec {

// Values by dotted name without the leading dot: "user.username", "var.region".
using Variables = std::map<std::string, std::string, std::less<>>;

struct ExpandError {
  std::size_t expression = 0;  // which `${{` in the text (0-based)
  std::size_t offset = 0;      // byte offset inside that expression, from its `$`
  std::string message;
};

struct Expansion {
  bool templated = false;            // the text holds at least one expression
  std::optional<std::string> value;  // empty when it depends on values not given
  std::vector<ExpandError> errors;
};

// Where the expanded text goes. In a document (cloudInit: YAML or a script) a value that holds a
// line break would add lines of its own, so it is refused unless `quote` made it one line.
enum class Into { Value, Document };

// With `values` null, checks every expression (syntax, known variables and functions) and
// leaves the value unknown when the text is templated. With values, every variable used
// must have one.
Expansion expand(std::string_view text, const Variables* values, Into into = Into::Value);

// The variables a template may use (besides var.NAME).
const std::vector<std::string_view>& known_variables();

}  // namespace bowline::spec
