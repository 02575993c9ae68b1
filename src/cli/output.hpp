// Output formatters shared by the verbs: JSON as YAML, and aligned tables.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bowline::cli {

// Block-style YAML with every string quoted where YAML would read it as something else.
std::string to_yaml(const nlohmann::ordered_json& value);

// Columns padded to the widest cell; the first row is the header.
std::string format_table(const std::vector<std::vector<std::string>>& rows);

}  // namespace bowline::cli
