#include "kubevirt/apply.hpp"

#include <optional>

#include "kubevirt/render.hpp"

namespace bowline::kubevirt {
namespace {

using Json = nlohmann::ordered_json;

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

bool ok(long status) {
  return status >= 200 && status <= 299;
}

// metadata.labels[key], when the object has that label.
std::optional<std::string> label(const Json& object, const char* key) {
  if (!object.is_object() || !object.contains("metadata")) return std::nullopt;
  const auto& metadata = object["metadata"];
  if (!metadata.is_object() || !metadata.contains("labels")) return std::nullopt;
  const auto& labels = metadata["labels"];
  if (!labels.is_object() || !labels.contains(key) || !labels[key].is_string()) return std::nullopt;
  return labels[key].get<std::string>();
}

// The labels bowline means an object to have; a caller that sends an object without them
// could not tell this space's objects from anyone else's.
struct Owner {
  std::string managed_by;
  std::string space;
};

Owner owner_of(const Json& ours) {
  auto managed_by = label(ours, kManagedByLabel);
  auto space = label(ours, kSpaceIdLabel);
  if (!managed_by || !space)
    throw std::invalid_argument(describe(ours) + " lacks the labels " + kManagedByLabel + " and " +
                                kSpaceIdLabel + " that say whose it is");
  return {std::move(*managed_by), std::move(*space)};
}

// The object as the cluster has it; nothing when it is not there.
std::optional<Json> read_object(KubeClient& client, const Json& object, const std::string& doing) {
  const auto response = client.send("GET", object_path(object), "", "");
  if (response.status == 404) return std::nullopt;
  if (!ok(response.status))
    throw ApiError(response.status, doing + " " + describe(object) + ": reading it first: HTTP " +
                                        std::to_string(response.status) + ": " +
                                        api_message(response));
  auto existing = Json::parse(response.body, nullptr, false);
  if (!existing.is_object())
    throw ApiError(response.status, doing + " " + describe(object) +
                                        ": reading it first: the answer is not a JSON object");
  return existing;
}

std::string uid_of(const Json& object) {
  return field(object, "metadata", "uid");
}

}  // namespace

std::string foreign_reason(const Json& existing, const Json& ours) {
  const auto want = owner_of(ours);
  const auto managed_by = label(existing, kManagedByLabel);
  const auto space = label(existing, kSpaceIdLabel);
  if (!managed_by)
    return std::string("another tool owns it (it has no label ") + kManagedByLabel + ")";
  if (*managed_by != want.managed_by)
    return std::string("another tool owns it (") + kManagedByLabel + "=" + *managed_by + ")";
  if (!space)
    return std::string("it is labelled ") + kManagedByLabel + "=" + *managed_by + " but has no " +
           kSpaceIdLabel + " label, so it may be anyone's (if it is this space's, label it " +
           kSpaceIdLabel + "=" + want.space + ")";
  if (*space != want.space)
    return std::string("another bowline space owns it (") + kSpaceIdLabel + "=" + *space + ")";
  return {};
}

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
    owner_of(object);
    auto target = object_path(object) + "?fieldManager=" + kFieldManager;
    // force only over this space's own object: it takes fields from whoever changed them.
    if (const auto existing = read_object(client, object, "applying")) {
      if (auto why = foreign_reason(*existing, object); !why.empty())
        throw ForeignObjectError(
            "applying " + describe(object) +
            ": the cluster already has it, and it is not this space's: " + why +
            ". bowline does not take it over: delete or rename it, "
            "or give the space another name");
      target += "&force=true";
    }
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
    owner_of(*it);
    const auto existing = read_object(client, *it, "deleting");
    if (!existing) {
      done.push_back(describe(*it) + " already gone");
      continue;
    }
    if (auto why = foreign_reason(*existing, *it); !why.empty()) {
      done.push_back(describe(*it) + " left alone: it is not this space's: " + why);
      continue;
    }
    // The uid makes the delete fail (409) if the object was replaced since it was read.
    Json options{{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
    if (const auto uid = uid_of(*existing); !uid.empty())
      options["preconditions"] = Json{{"uid", uid}};
    const auto target = object_path(*it) + "?propagationPolicy=Background";
    const auto response = client.send("DELETE", target, "application/json", options.dump());
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
