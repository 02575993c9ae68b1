// Reading request bodies: typed fields with a 400 that names the field when the type is wrong.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/http.hpp"

namespace bowline::api {

// The body as a JSON object (400 otherwise).
nlohmann::json object_body(const Request& request);
// nullopt when absent (or null with `null_is_absent`); 400 when not a string.
std::optional<std::string> string_field(const nlohmann::json& body, const char* name);
// 400 when absent or empty.
std::string required_string(const nlohmann::json& body, const char* name);
std::optional<bool> bool_field(const nlohmann::json& body, const char* name);
std::optional<std::vector<std::string>> string_list_field(const nlohmann::json& body,
                                                          const char* name);

}  // namespace bowline::api
