#include "kubevirt/apply.hpp"

namespace bowline::kubevirt {
namespace {

struct Resource {
  const char* api_version;
  const char* kind;
  const char* plural;
};

// The kinds render_manifests produces.
constexpr Resource kResources[] = {
    {"v1", "Secret", "secrets"},
    {"v1", "Service", "services"},
    {"kubevirt.io/v1", "VirtualMachine", "virtualmachines"},
    {"cdi.kubevirt.io/v1beta1", "DataVolume", "datavolumes"},
};

std::string field(const nlohmann::ordered_json& object, const char* a, const char* b = nullptr) {
  const auto* node = &object;
  for (const char* key : {a, b}) {
    if (!key) break;
    if (!node->is_object() || !node->contains(key)) return {};
    node = &(*node)[key];
  }
  return node->is_string() ? node->get<std::string>() : std::string();
}

}  // namespace

std::string api_message(const HttpResponse& response) {
  const auto status = nlohmann::json::parse(response.body, nullptr, false);
  if (status.is_object() && status.contains("message") && status["message"].is_string()) {
    std::string reason = status.value("reason", "");
    return (reason.empty() ? "" : reason + ": ") + status["message"].get<std::string>();
  }
  auto body = response.body.substr(0, 300);
  return body.empty() ? "no message" : body;
}

std::string object_path(const nlohmann::ordered_json& object) {
  const auto api_version = field(object, "apiVersion");
  const auto kind = field(object, "kind");
  const auto ns = field(object, "metadata", "namespace");
  const auto name = field(object, "metadata", "name");
  if (ns.empty() || name.empty())
    throw std::invalid_argument(kind + " without metadata.namespace and metadata.name");
  for (const auto& r : kResources)
    if (api_version == r.api_version && kind == r.kind) {
      const std::string prefix = api_version.find('/') == std::string::npos ? "/api/" : "/apis/";
      return prefix + api_version + "/namespaces/" + ns + "/" + r.plural + "/" + name;
    }
  throw std::invalid_argument("no API path known for " + api_version + " " + kind);
}

std::string describe(const nlohmann::ordered_json& object) {
  return field(object, "kind") + "/" + field(object, "metadata", "name");
}

std::vector<std::string> apply_objects(KubeClient& client,
                                       const std::vector<nlohmann::ordered_json>& objects) {
  std::vector<std::string> done;
  for (const auto& object : objects) {
    const auto target = object_path(object) + "?fieldManager=" + kFieldManager + "&force=true";
    // JSON is YAML: the apply body needs no YAML emitter.
    const auto response = client.send("PATCH", target, kApplyPatchType, object.dump());
    if (response.status < 200 || response.status > 299)
      throw ApiError(response.status, "applying " + describe(object) + ": HTTP " +
                                          std::to_string(response.status) + ": " +
                                          api_message(response));
    done.push_back(describe(object) + (response.status == 201 ? " created" : " applied"));
  }
  return done;
}

std::vector<std::string> delete_objects(KubeClient& client,
                                        const std::vector<nlohmann::ordered_json>& objects) {
  std::vector<std::string> done;
  for (auto it = objects.rbegin(); it != objects.rend(); ++it) {
    const auto target = object_path(*it) + "?propagationPolicy=Background";
    const auto response = client.send("DELETE", target, "", "");
    if (response.status == 404) {
      done.push_back(describe(*it) + " already gone");
      continue;
    }
    if (response.status < 200 || response.status > 299)
      throw ApiError(response.status, "deleting " + describe(*it) + ": HTTP " +
                                          std::to_string(response.status) + ": " +
                                          api_message(response));
    done.push_back(describe(*it) + " deleted");
  }
  return done;
}

}  // namespace bowline::kubevirt
