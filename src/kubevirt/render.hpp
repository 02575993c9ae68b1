// A Spec as KubeVirt manifests: the VirtualMachine, the Secret with its cloud-init (when the
// VM gets a cloud-init disk), the Service that reaches it and the DataVolume of its system
// disk. Pure: no I/O, no clock, the same inputs give the same bytes.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "plan/guest_plan.hpp"
#include "spec/spec.hpp"

namespace bowline::kubevirt {

enum class PodBinding { Bridge, Masquerade };

struct RenderOptions {
  std::string ns;          // the Kubernetes namespace (also in the cloudInitSeed UUID)
  plan::Owner owner;       // the account bowline's user-data creates (its id is not used)
  std::string space_name;  // recorded as an annotation when given
  // Salts the password hash and labels every object (kSpaceIdLabel); empty: "<namespace>/<VM
  // name>" salts and a digest of it labels, stable for the VM's life.
  std::string space_id;
  // A library image (bare name) is cloned from the PVC of that name in this namespace.
  std::string image_namespace = "bowline-images";
  // disks[].name refers to the DataVolume <prefix><name>: Cozystack's VMDisks are vm-disk-NAME,
  // so a Cozystack values file's disks work as they are.
  std::string data_volume_prefix = "vm-disk-";
  std::string storage_class;               // empty: the cluster's default
  std::string default_disk_size = "10Gi";  // a URL image without `disk`: CDI needs a size
  // Bridge keeps the pod's address inside the guest, as Cozystack does; Masquerade NATs.
  PodBinding pod_binding = PodBinding::Bridge;
  std::optional<plan::HostKeyPair> host_key;  // the guest's SSH host key, when bowline made one
  std::string terminal_key_public;            // the browser terminal's key (plan::add_terminal_key)
  std::string instance_id;                    // cloud-init's (plan::GuestPlan); empty: the first
  // A space of bowline's server: it always gets bowline's cloud-init (the owner's account,
  // keys, environment, host and terminal keys), merged with the template's, as on libvirt.
  // Off, as for `bowline kubevirt render` of a Cozystack values file: cloud-init only when
  // cloudInit, sshKeys or netplanDhcp ask for it, as Cozystack does (a disk that appears later
  // makes the guest's next boot a first boot).
  bool always_cloud_init = false;
};

struct Manifests {
  // In the order to apply them: DataVolume, Secret (if any), VirtualMachine, Service.
  std::vector<nlohmann::ordered_json> objects;
  // What the spec asks for that has no KubeVirt meaning here, said once each.
  std::vector<std::string> notes;
};

// Every problem that keeps the spec from becoming manifests, one per line.
class RenderError : public std::runtime_error {
 public:
  explicit RenderError(const std::vector<std::string>& problems);
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::vector<std::string> problems_;
};

// Every object is labelled managed-by bowline and with its space: apply and delete change only
// objects on the cluster that carry both, with this space's values (apply.hpp).
inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kManagedByBowline = "bowline";
inline constexpr const char* kSpaceIdLabel = "bowline/space-id";
// The kSpaceIdLabel value: `space_id` itself, or without one 16 hex digits of the SHA-256 of
// "<namespace>/<VM name>" (a CLI apply without --var space.id).
std::string space_label_value(const std::string& space_id, const std::string& ns,
                              const std::string& vm_name);
// {managed-by: bowline, bowline/space-id: value}
nlohmann::ordered_json ownership_labels(const std::string& space_label);

// Throws RenderError. The spec must come from load_spec with values (no unknown fields).
Manifests render_manifests(const spec::Spec& spec, const RenderOptions& options);

// The names the manifests use, derived from the VM's name.
std::string system_disk_name(const std::string& vm_name);  // the DataVolume
std::string cloud_init_secret_name(const std::string& vm_name);

}  // namespace bowline::kubevirt
