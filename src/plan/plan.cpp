#include "plan/plan.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "catalog/catalog.hpp"
#include "spec/boot_disk.hpp"
#include "spec/validators.hpp"
#include "util/hash.hpp"
#include "util/strings.hpp"

namespace bowline::plan {
namespace {

// Targets per bus family: virtio disks are vdX, the others sdX.
class TargetNames {
 public:
  std::string next(const std::string& bus) {
    const bool virtio = bus == "virtio";
    const char letter = static_cast<char>('a' + (virtio ? vd_++ : sd_++));
    return std::string(virtio ? "vd" : "sd") + letter;
  }

 private:
  int vd_ = 0, sd_ = 0;
};

}  // namespace

bool is_reserved_directory(std::string_view name) {
  return name == "base" || name == "cloud-images" || name == "volumes";
}

std::string space_dir(const std::string& images_path, const std::string& domain) {
  return images_path + "/" + domain;
}

std::string console_log_of(const std::string& dir) {
  return dir + "/console.log";
}

std::string space_file(const NodeSettings& node, const std::string& domain,
                       const std::string& leaf) {
  if (node.side_by_side) return node.images_path + "/" + domain + "." + leaf;
  return space_dir(node.images_path, domain) + "/" + leaf;
}

std::string tap_name(const std::string& guard_tag, const std::string& domain, std::size_t index) {
  static constexpr char kHex[] = "0123456789abcdef";
  return "bw" + guard_tag + util::sha256_hex(domain).substr(0, 8) + kHex[(index >> 4) & 15] +
         kHex[index & 15];
}

const char* to_string(DomainType t) {
  return t == DomainType::Qemu ? "qemu" : "kvm";
}

std::string uuid_from_seed(const std::string& ns, const std::string& name,
                           const std::string& seed) {
  const auto h = util::sha256_hex(ns + "-" + name + "-" + seed);
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-4" + h.substr(13, 3) + "-9" + h.substr(17, 3) +
         "-" + h.substr(20, 12);
}

namespace {

// Firmware: the spec's bootloader with its own flags, else the preference's defaults.
Firmware firmware_of(const spec::Spec& spec, const catalog::Preference* preference,
                     const NodeSettings& node, const std::string& domain) {
  Firmware fw;
  if (spec.firmware.bootloader) {
    fw.bootloader = *spec.firmware.bootloader;
    fw.secure_boot = spec.firmware.secure_boot;
  } else if (preference && preference->firmware == catalog::Firmware::Uefi) {
    fw.bootloader = spec::Bootloader::Uefi;
    fw.secure_boot = preference->secure_boot || spec.firmware.secure_boot;
  }
  const bool efi_persistent =
      spec.firmware.efi_persistent ||
      (!spec.firmware.bootloader && preference && preference->efi_persistent);
  fw.smm =
      fw.secure_boot || (preference && preference->smm && fw.bootloader == spec::Bootloader::Uefi);
  if (fw.bootloader == spec::Bootloader::Uefi) {
    fw.loader = fw.secure_boot ? node.ovmf_secure_code : node.ovmf_code;
    fw.vars_template = fw.secure_boot ? node.ovmf_secure_vars : node.ovmf_vars;
    fw.nvram = space_file(node, domain, "nvram.fd");
    fw.reset_nvram_on_start = !efi_persistent;
  }
  return fw;
}

// Disks: the overlay, then the named disks; without an image the first named disk is the
// system disk (it boots). Each named disk is <images>/volumes/<name>.qcow2 here: the libvirt
// node puts the files of the owner's disk objects in their place (with_disk_files). The seed
// cdrom takes the next sd name.
void add_disks(Plan& p, const spec::Spec& spec, const catalog::Preference* preference,
               const NodeSettings& node) {
  const std::string default_bus = preference ? std::string(preference->disk_bus) : "virtio";
  const auto file_of = [&](std::size_t i) {
    return node.images_path + "/volumes/" + spec.disks[i].name + ".qcow2";
  };
  TargetNames targets;
  std::size_t first_data = 0;
  if (spec::boots_from_disk(spec)) {
    const auto bus = spec.disks[0].bus.value_or(default_bus);
    p.system_disk = {file_of(0), bus, targets.next(bus)};
    first_data = 1;
  } else {
    p.system_disk = {space_file(node, p.domain_name, "disk.qcow2"), default_bus,
                     targets.next(default_bus)};
  }
  for (std::size_t i = first_data; i < spec.disks.size(); ++i) {
    const auto bus = spec.disks[i].bus.value_or(default_bus);
    p.data_disks.push_back({file_of(i), bus, targets.next(bus)});
  }
  p.seed_iso = space_file(node, p.domain_name, "seed.iso");
  p.console_log = space_file(node, p.domain_name, "console.log");
}

// NICs: the spec's network, then each `networks` entry, with the guest plan's MACs.
void add_nics(Plan& p, const spec::Spec& spec, const catalog::Preference* preference,
              const NodeSettings& node) {
  const std::string model = preference ? std::string(preference->nic_model) : "virtio";
  const bool bridged = spec.network.mode == spec::NetworkMode::Bridged;
  if (spec.networks.size() > 254)
    throw std::invalid_argument("a space has at most 255 network interfaces");
  // A bridged NIC's address is the space's; the others' come from their networks' DHCP.
  p.nics.push_back({bridged ? NicType::Bridge : NicType::Network,
                    spec.network.bridge,
                    p.guest.primary_mac,
                    model,
                    bridged ? p.ip : std::nullopt,
                    {},
                    tap_name(node.guard_tag, p.domain_name, 0)});
  for (std::size_t i = 0; i < spec.networks.size(); ++i)
    p.nics.push_back({NicType::Network,
                      spec.networks[i],
                      p.guest.extra_macs.at(i),
                      model,
                      std::nullopt,
                      {},
                      tap_name(node.guard_tag, p.domain_name, i + 1)});
}

void add_passthrough(Plan& p, const spec::Spec& spec) {
  for (const auto& d : spec.devices) p.host_devices.push_back(d);
  for (const auto& gpu : spec.gpus) {
    if (auto device = spec::gpu_pci_address(gpu))
      p.host_devices.push_back(*device);
    else
      p.notes.push_back("gpu " + gpu +
                        " is a device-plugin resource: this node resolves it to a host device "
                        "when the space starts");
  }
}

// Instance-type traits, and until the node places the space (place(), at start) what is
// still missing.
void add_traits(Plan& p, const spec::Spec& spec) {
  if (spec.sizing.source != spec::SizingSource::InstanceType || !spec.instance_type) return;
  const auto* type = catalog::find_instance_type(*spec.instance_type);
  if (!type) return;
  const auto& traits = *type->traits;
  p.placement.hugepages_size = type->hugepages_size;
  p.placement.dedicated_cpu = traits.dedicated_cpu;
  p.placement.isolate_emulator_thread = traits.isolate_emulator_thread;
  p.placement.vnuma = traits.vnuma;
  p.placement.realtime = traits.realtime;
  if (traits.dedicated_cpu)
    p.notes.push_back(std::string("dedicated CPU placement: no host CPUs are set aside for "
                                  "this space (server.kvm.dedicated_cpus), so its vCPUs") +
                      (traits.isolate_emulator_thread ? " and its emulator thread" : "") +
                      " are not pinned");
  if (traits.vnuma)
    p.notes.push_back(
        "vNUMA: the guest's NUMA cell follows the host nodes of its pinned CPUs, and it has "
        "none");
  if (traits.realtime)
    p.notes.push_back("realtime vCPUs need dedicated CPUs: FIFO scheduling is not applied");
  if (traits.memory_overcommit_percent)
    p.notes.push_back(
        "memory overcommit is the host's business on libvirt: nothing to set per domain");
}

// A bridged space's address on its template's network, with the node's resolvers.
std::optional<StaticAddress> static_address(const spec::Spec& spec, const SpaceFacts& space,
                                            const NodeSettings& node) {
  if (spec.network.mode != spec::NetworkMode::Bridged) return std::nullopt;
  if (!space.ip) throw std::invalid_argument("a bridged space needs an IP address");
  if (!spec.network.cidr || !spec.network.cidr->contains(*space.ip))
    throw std::invalid_argument(space.ip->to_string() + " is outside the template's network");
  return StaticAddress{*spec.network.cidr, *space.ip,
                       spec.network.gateway.value_or(spec.network.cidr->first_usable()),
                       node.resolvers};
}

}  // namespace

Plan make_plan(const spec::Spec& spec, const Owner& owner, const SpaceFacts& space,
               const NodeSettings& node) {
  if (space.id.empty()) throw std::invalid_argument("the space has no id");
  Plan p;
  p.domain_name = spec.name;
  if (auto problem = spec::check_domain_name(p.domain_name); !problem.empty())
    throw std::invalid_argument(problem);
  p.domain_type = node.domain_type;
  p.run_strategy = spec.run_strategy;
  p.space_dir = space_dir(node.images_path, p.domain_name);
  if (spec.cloud_init_seed) {
    p.uuid = uuid_from_seed(owner.username, p.domain_name, *spec.cloud_init_seed);
  } else {
    if (!util::looks_like_uuid(space.uuid))
      throw std::invalid_argument("the space has no UUID (expected 8-4-4-4-12 hex digits)");
    p.uuid = space.uuid;
  }
  p.memory_bytes = spec.sizing.memory_bytes;
  p.sockets = spec.sizing.sockets;
  p.cores = spec.sizing.cores;
  p.cpu_model = spec.cpu_model;
  const auto address = static_address(spec, space, node);
  p.guest = make_guest_plan(spec, owner, space.id, address);
  if (!space.instance_id.empty()) p.guest.instance_id = space.instance_id;
  p.guest.host_key = space.host_key;
  add_terminal_key(p.guest, space.terminal_key_public);
  if (address) p.ip = address->address;

  const auto* preference =
      spec.instance_profile ? catalog::find_preference(*spec.instance_profile) : nullptr;
  p.firmware = firmware_of(spec, preference, node, p.domain_name);
  add_disks(p, spec, preference, node);
  add_nics(p, spec, preference, node);
  add_passthrough(p, spec);
  add_traits(p, spec);
  p.display = spec.display;
  p.vnc_password = space.vnc_password;
  return p;
}

unsigned dedicated_cpus_needed(const Plan& plan) {
  if (!plan.placement.dedicated_cpu) return 0;
  return plan.sockets * plan.cores + (plan.placement.isolate_emulator_thread ? 1 : 0);
}

std::vector<std::string> resource_gpus(const spec::Spec& spec) {
  std::vector<std::string> out;
  // The GPUs an instance type brings (gn1) come first, as KubeVirt adds them.
  if (spec.sizing.source == spec::SizingSource::InstanceType && spec.instance_type)
    if (const auto* type = catalog::find_instance_type(*spec.instance_type))
      for (const auto& gpu : type->gpus) out.emplace_back(gpu);
  for (const auto& gpu : spec.gpus)
    if (!spec::gpu_pci_address(gpu)) out.push_back(gpu);
  return out;
}

void place(Plan& plan, const spec::Spec& spec, const Placed& placed) {
  auto drop_note = [&](const std::string& start) {
    std::erase_if(plan.notes, [&](const std::string& n) { return n.rfind(start, 0) == 0; });
  };
  const unsigned vcpus = plan.sockets * plan.cores;
  auto& pl = plan.placement;
  if (!placed.cpus.empty()) {
    if (placed.cpus.size() != dedicated_cpus_needed(plan))
      throw std::invalid_argument("the node chose " + std::to_string(placed.cpus.size()) +
                                  " dedicated CPUs; the space needs " +
                                  std::to_string(dedicated_cpus_needed(plan)));
    pl.vcpu_pins.assign(placed.cpus.begin(), placed.cpus.begin() + vcpus);
    if (pl.isolate_emulator_thread) pl.emulator_pin = placed.cpus.back();
    pl.numa_nodes = placed.numa_nodes;
    drop_note("dedicated CPU placement");
    drop_note("realtime vCPUs");
    if (!pl.numa_nodes.empty()) drop_note("vNUMA");
  }
  const auto named = resource_gpus(spec);
  if (!placed.gpus.empty()) {
    if (placed.gpus.size() != named.size())
      throw std::invalid_argument("the node resolved " + std::to_string(placed.gpus.size()) +
                                  " GPUs; the space names " + std::to_string(named.size()));
    for (std::size_t i = 0; i < named.size(); ++i) {
      plan.host_devices.push_back({named[i], placed.gpus[i].address});
      drop_note("gpu " + named[i] + " ");
    }
  }
}

}  // namespace bowline::plan
