// Node readiness: every prerequisite for running spaces on this host, each with its status and
// the fix. `bowline node check` prints it; the server publishes the same report in
// GET /api/v1/nodes. The node offers the `kvm` runtime only when every required check is ok.
//
// The checks touch the host only through seams (Hypervisor, HostProbe, ProcessRunner) and the
// filesystem paths in NodeCheckOptions, so tests run them on fakes and temp directories.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/host_probe.hpp"
#include "engine/kvm_probe.hpp"
#include "libvirt/hypervisor.hpp"
#include "spec/spec.hpp"
#include "util/process.hpp"

namespace bowline::engine {

enum class CheckStatus { Ok, Warn, Missing };
const char* to_string(CheckStatus status);  // ok | warn | missing

struct Check {
  std::string name;   // stable id: kvm, kvm-runs, libvirt, qemu-img, domain-type, nwfilter
                      // or guest-guard,
                      // images-path, cloud-image-path, base-image-path,
                      // bridge:<name>, network:<name>, dhcp:<network>, device:<text>,
                      // devices
  std::string title;  // what was checked, for people: "bridge br0 has a NIC"
  CheckStatus status = CheckStatus::Ok;
  bool required = true;  // a required check that is not ok withholds the runtime
  std::string detail;    // what was found
  std::string fix;       // what to do about it; empty when ok
};

// What the templates to be run here need of the host.
struct NodeRequirements {
  std::vector<std::string> bridges;   // host bridges of bridged templates
  std::vector<std::string> networks;  // libvirt networks: NAT templates' and extra NICs'
  std::vector<spec::Device> devices;  // passthrough devices templates name
  bool external_ports = false;        // a NAT template publishes ports on this host
  void add(const spec::Spec& spec);   // keeps each name once, in first-seen order
};

struct NodeCheckOptions {
  std::string node_name = "local";
  std::string domain_type = "auto";  // auto | kvm | qemu (server.domain_type)
  std::string images_path = "/var/lib/libvirt/images/bowline";
  // Where base images live (QEMU opens them as backing files); empty: not checked.
  std::string cloud_image_path;
  std::string base_image_path;
  // The user QEMU runs as; the first that exists is used. Empty list: skip the check.
  std::vector<std::string> qemu_users{"libvirt-qemu", "qemu"};
  std::string kvm_device = "/dev/kvm";
  std::string qemu_img = "qemu-img";
  std::string ebtables = "ebtables";  // what libvirt's network filters are applied with
  // What filters guests (server.kvm.guest_filter: auto | guard | nwfilter), the program the
  // guard writes its table with, and its table when a server asks (empty: not looked at).
  std::string guest_filter = "auto";
  std::string nft = "nft";
  std::string guard_table;
  std::string ip_forward_file = "/proc/sys/net/ipv4/ip_forward";
  NodeRequirements requirements;
};

struct NodeReport {
  std::string name;
  std::string uri;
  std::string domain_type;            // what spaces run as: kvm | qemu (auto resolved)
  std::string domain_type_setting;    // auto | kvm | qemu, as configured
  std::vector<std::string> warnings;  // e.g. software emulation chosen by auto
  std::vector<std::string> runtimes;  // {"kvm"} when ready, else empty
  std::vector<Check> checks;
  std::vector<libvirt::NodeDevice> passthrough_devices;  // PCI with an IOMMU group, USB
  bool ready() const { return !runtimes.empty(); }
};

// The hypervisor is null when the connection could not be made; `connect_error` says why.
struct NodeCheckContext {
  libvirt::Hypervisor* hypervisor = nullptr;
  std::string uri;
  std::string connect_error;
  const HostProbe* host = nullptr;
  util::ProcessRunner* runner = nullptr;
  // What the KVM probe found (the server's start-up probe, or one run for `node check`);
  // null: not probed, so domain type auto resolves to qemu.
  const KvmVerdict* kvm = nullptr;
};

NodeReport check_node(const NodeCheckOptions& options, const NodeCheckContext& context);

// {name, uri, domainType, domainTypeSetting, warnings, runtimes, ready, checks: [{name, title,
// status, required, detail, fix}], devices: [{name, kind, vendorId, productId, vendor, product,
// iommuGroup, driver}]}
nlohmann::ordered_json to_json(const NodeReport& report);

// ---- the images path's permission trap, exposed for tests --------------------------------

struct Identity {
  std::string name;
  unsigned uid = 0;
  unsigned gid = 0;
  std::vector<unsigned> groups;  // supplementary groups, with gid
};
// getpwnam + getgrouplist; nullopt when there is no such user.
std::optional<Identity> lookup_identity(const std::string& user);

// Whether `who` may access `path` with `mask` (bits of 4 read, 2 write, 1 execute) by its mode
// bits and POSIX access ACL, as the kernel decides for an unprivileged process. nullopt when
// the path cannot be examined.
std::optional<bool> may_access(const std::string& path, const Identity& who, unsigned mask);

// `path` and each of its parents (from the root down) that `who` cannot traverse (execute).
// A component that does not exist ends the walk.
std::vector<std::string> untraversable_components(const std::string& path, const Identity& who);

}  // namespace bowline::engine
