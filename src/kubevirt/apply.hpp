// Rendered objects onto a cluster: server-side apply each one, or delete them.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "kubevirt/kube_client.hpp"

namespace bowline::kubevirt {

// The API answered with an error status.
class ApiError : public std::runtime_error {
 public:
  ApiError(long status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  long status() const { return status_; }

 private:
  long status_;
};

inline constexpr const char* kFieldManager = "bowline";
inline constexpr const char* kApplyPatchType = "application/apply-patch+yaml";

// "Forbidden: virtualmachines.kubevirt.io "dev" is forbidden: ..." from a Status body (its
// reason and message), else the start of the body.
std::string api_message(const HttpResponse& response);

// /api/v1/namespaces/<ns>/secrets/<name>, /apis/kubevirt.io/v1/namespaces/<ns>/virtualmachines/
// <name>, ... from the object's apiVersion, kind and metadata. Throws std::invalid_argument
// for a kind this backend does not render.
std::string object_path(const nlohmann::ordered_json& object);

// "VirtualMachine/dev" for messages.
std::string describe(const nlohmann::ordered_json& object);

// Server-side apply of each object in order (PATCH, apply-patch+yaml, force: bowline owns
// the fields it renders). Stops at the first error: throws ApiError or TransportError.
// Returns one line per object, e.g. "VirtualMachine/dev applied".
std::vector<std::string> apply_objects(KubeClient& client,
                                       const std::vector<nlohmann::ordered_json>& objects);

// Deletes the objects in reverse order; one that is already gone is not an error.
std::vector<std::string> delete_objects(KubeClient& client,
                                        const std::vector<nlohmann::ordered_json>& objects);

}  // namespace bowline::kubevirt
