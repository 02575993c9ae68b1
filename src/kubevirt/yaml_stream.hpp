// JSON values as YAML documents, emitted by yaml-cpp. A string is written plain only when
// every YAML 1.1 and 1.2 reader takes it back as that same string; otherwise it is quoted.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace bowline::kubevirt {

std::string to_yaml(const nlohmann::ordered_json& value);

// One document per object, each introduced by `---`.
std::string to_yaml_stream(const std::vector<nlohmann::ordered_json>& objects);

}  // namespace bowline::kubevirt
