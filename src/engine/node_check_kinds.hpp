// The node checks by kind, one file each, and what they share; check_node (node_check.cpp)
// runs them in order. Internal to engine/: node_check.hpp is what the rest of bowline uses.
//   node_check_hypervisor.cpp  kvm, kvm-runs, libvirt, qemu-img, domain-type
//   node_check_storage.cpp     images-path, cloud-image-path, base-image-path
//   node_check_network.cpp     ip-forward, bridge:<name>, network:<name>
//   node_check_devices.cpp     device:<text>, devices
//   node_check_permissions.cpp who may enter which directory (the storage and kvm checks)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "engine/node_check.hpp"

namespace bowline::engine::node_checks {

// ---- shared (node_check.cpp) ----
Check make_check(std::string name, std::string title);
std::string join(const std::vector<std::string>& items, const std::string& separator);
std::string first_line(const std::string& text);
// The first of options.qemu_users that exists on this host.
std::optional<Identity> qemu_identity(const NodeCheckOptions& options);

// ---- the hypervisor (node_check_hypervisor.cpp) ----
Check check_kvm(const NodeCheckOptions& options, const std::optional<Identity>& qemu);
Check check_kvm_runs(const NodeCheckOptions& options, const KvmVerdict* verdict);
Check check_libvirt(const NodeCheckContext& context);
Check check_qemu_img(const NodeCheckOptions& options, util::ProcessRunner* runner);
Check check_domain_type(const NodeCheckOptions& options, libvirt::Hypervisor* hypervisor);

// ---- storage (node_check_storage.cpp) ----
// A directory QEMU must reach (its user must enter every directory above the files it opens)
// and, when `writable`, bowline must be able to fill (it makes it when it is missing).
struct StoragePath {
  std::string name;  // the check's id
  std::string what;  // "images path", "cloud-image library", "base-image cache"
  std::string setting;
  std::string path;
  bool writable = true;
};
std::vector<StoragePath> storage_paths(const NodeCheckOptions& options);
// A hint when the base-image cache holds files named after an URL's last segment alone
// (knot's layout, copied by hand): used only with a matching imageChecksum until adopted.
std::optional<Check> check_unkeyed_cache(const NodeCheckOptions& options);
Check check_storage_path(const StoragePath& where, const NodeCheckOptions& options,
                         const std::optional<Identity>& qemu);

// ---- the network (node_check_network.cpp) ----
Check check_ip_forward(const NodeCheckOptions& options);
Check check_bridge(const std::string& bridge, const HostProbe* host);
Check check_network(const std::string& network, libvirt::Hypervisor* hypervisor);

// ---- devices (node_check_devices.cpp) ----
// The devices templates name, and a summary of what could be passed through.
void add_device_checks(NodeReport& report, const NodeCheckOptions& options,
                       const NodeCheckContext& context);

}  // namespace bowline::engine::node_checks
