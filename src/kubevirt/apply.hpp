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

// An object on the cluster that is not this space's: bowline neither takes it over nor
// deletes it. Status 409, as the API server's own conflicts.
class ForeignObjectError : public ApiError {
 public:
  explicit ForeignObjectError(const std::string& message) : ApiError(409, message) {}
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

// Whose an object on the cluster is, against the labels (kManagedByLabel, kSpaceIdLabel) of
// `ours`, the object bowline means: empty when the cluster's carries both with the same
// values, else why not ("another tool owns it: ...").
std::string foreign_reason(const nlohmann::ordered_json& existing,
                           const nlohmann::ordered_json& ours);

// Server-side apply of each object in order (PATCH, apply-patch+yaml), each read first: one
// that is not there is created without force; one that is this space's (foreign_reason) is
// applied with force, since bowline owns the fields it renders; any other is not sent but
// refused with ForeignObjectError, so bowline never takes over what another tool or space
// made. Each object must carry both labels. Stops at the first error: throws ApiError or
// TransportError. Returns one line per object, e.g. "VirtualMachine/dev applied".
std::vector<std::string> apply_objects(KubeClient& client,
                                       const std::vector<nlohmann::ordered_json>& objects);

// Deletes the objects in reverse order, each read first: one that is already gone is not an
// error, one that is not this space's is left alone (and said so), the rest are deleted with
// their uid as a precondition, so an object replaced since the read is not. Each object must
// carry both labels.
std::vector<std::string> delete_objects(KubeClient& client,
                                        const std::vector<nlohmann::ordered_json>& objects);

}  // namespace bowline::kubevirt
