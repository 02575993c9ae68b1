#include "api/body.hpp"

namespace bowline::api {

nlohmann::json object_body(const Request& request) {
  auto body = request.json();
  if (!body.is_object()) throw HttpError(400, "the body must be a JSON object");
  return body;
}

std::optional<std::string> string_field(const nlohmann::json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_string()) throw HttpError(400, std::string("\"") + name + "\" must be a string");
  return it->get<std::string>();
}

std::string required_string(const nlohmann::json& body, const char* name) {
  auto value = string_field(body, name);
  if (!value || value->empty()) throw HttpError(400, std::string("\"") + name + "\" is required");
  return *value;
}

std::optional<bool> bool_field(const nlohmann::json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean())
    throw HttpError(400, std::string("\"") + name + "\" must be true or false");
  return it->get<bool>();
}

std::optional<std::vector<std::string>> string_list_field(const nlohmann::json& body,
                                                          const char* name) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  const auto bad = HttpError(400, std::string("\"") + name + "\" must be a list of strings");
  if (!it->is_array()) throw bad;
  std::vector<std::string> out;
  for (const auto& item : *it) {
    if (!item.is_string()) throw bad;
    out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace bowline::api
