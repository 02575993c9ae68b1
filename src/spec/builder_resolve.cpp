// Rules that span fields, and the VM's size: complete resources > instanceType > knot's
// memory/cpus > defaults. Cozystack's defaults (seed 003) apply where a template is silent: a VM
// that nothing sizes is a u1.medium, and one without a preference gets ubuntu (unless the VM is
// smaller than ubuntu's minimum, which only a knot-sized template can be). Each resolved value
// records where it came from in Spec::origins, for `bowline template show`.
#include "catalog/catalog.hpp"
#include "spec/builder.hpp"
#include "spec/quantity.hpp"

namespace bowline::spec {
namespace {

constexpr std::uint64_t kKnotDefaultMemory = 512ull << 20;  // knot's, with memory/cpus in part
constexpr std::uint64_t kUint32Max = 4294967295ull;
constexpr const char* kDefaultInstanceType = "u1.medium";
constexpr const char* kDefaultPreference = "ubuntu";

}  // namespace

// What the template says about sizing, read once for the steps below.
struct SpecBuilder::SizingFields {
  bool knot = false;                // memory or cpus
  bool any_resources = false;       // resources.cpu, .sockets or .memory
  bool complete_resources = false;  // all three
  bool type = false;                // a non-empty instanceType
  bool type_field = false;          // instanceType present, even ""
};

SpecBuilder::SizingFields SpecBuilder::sizing_fields(const YAML::Node& root) const {
  const auto present = [&](const char* key) { return !Reader::absent(root[key]); };
  const YAML::Node resources = root["resources"];
  const auto res_present = [&](const char* key) {
    return resources.IsDefined() && resources.IsMap() && !Reader::blank(resources[key]);
  };
  SizingFields f;
  f.knot = present("memory") || present("cpus");
  f.any_resources = res_present("cpu") || res_present("sockets") || res_present("memory");
  f.complete_resources = res_present("cpu") && res_present("sockets") && res_present("memory");
  f.type_field = present("instanceType");
  f.type =
      f.type_field && !(root["instanceType"].IsScalar() && root["instanceType"].Scalar().empty());
  return f;
}

void SpecBuilder::check_sizing_conflicts(const YAML::Node& root, const SizingFields& f) {
  const auto present = [&](const char* key) { return !Reader::absent(root[key]); };
  const YAML::Node resources = root["resources"];
  const auto res_present = [&](const char* key) {
    return resources.IsDefined() && resources.IsMap() && !Reader::blank(resources[key]);
  };
  const auto knot_node = present("memory") ? root["memory"] : root["cpus"];
  const char* knot_path = present("memory") ? "memory" : "cpus";
  if (f.knot && f.any_resources) {
    r_.error(
        knot_node, knot_path,
        "memory/cpus and resources both size the VM: keep one (resources: {cpu, sockets, memory})");
  } else if (f.knot && f.type) {
    r_.error(knot_node, knot_path, "memory/cpus and instanceType both size the VM: keep one");
  } else if (f.any_resources && !f.complete_resources) {
    std::string given, missing;
    for (const char* key : {"cpu", "sockets", "memory"}) {
      auto& list = res_present(key) ? given : missing;
      list += (list.empty() ? "" : ", ") + std::string("resources.") + key;
    }
    if (f.type)
      r_.error(resources, "resources",
               "instanceType \"" +
                   spec_.instance_type.value_or(root["instanceType"].as<std::string>("")) +
                   "\" cannot be combined with resources that size the VM only in part (" + given +
                   " given; " + missing +
                   " missing): give cpu, sockets and memory together, or remove resources and let "
                   "the instance type size the VM");
    else  // as Cozystack says: a block that sizes only part of the VM sizes nothing
      r_.warning(resources, "resources",
                 "ignored: resources size the VM only with cpu, sockets and memory together (" +
                     missing + " missing)");
  } else if (f.complete_resources && f.type) {
    r_.warning(root["instanceType"], "instanceType",
               "ignored: resources size the VM, so the whole instance type is dropped (with any "
               "dedicated CPUs, hugepages or NUMA it carries)");
  }
}

void SpecBuilder::resolve_sizing(const YAML::Node& root, const SizingFields& f) {
  if (f.type) spec_.origins["instanceType"] = "template";
  // A template that sizes the VM nowhere gets Cozystack's default instance type. An explicit
  // instanceType: "" means none: knot's defaults then.
  if (!f.knot && !f.any_resources && !f.type_field) {
    spec_.instance_type = kDefaultInstanceType;
    spec_.origins["instanceType"] = "default";
  }
  auto& sizing = spec_.sizing;
  if (spec_.resources.sizes_vm()) {
    sizing = {SizingSource::Resources, *spec_.resources.memory_bytes, *spec_.resources.sockets,
              *spec_.resources.cpu};
    if (static_cast<std::uint64_t>(sizing.sockets) * sizing.cores > kUint32Max)
      r_.error(root["resources"], "resources",
               "cpu x sockets = " +
                   std::to_string(static_cast<std::uint64_t>(sizing.sockets) * sizing.cores) +
                   " vCPUs, above 4294967295");
    spec_.origins["sizing"] = "template (resources)";
  } else if (const auto* type = spec_.instance_type
                                    ? catalog::find_instance_type(*spec_.instance_type)
                                    : nullptr) {
    sizing = {SizingSource::InstanceType, type->memory_bytes, type->vcpus, 1};
    // The one trait libvirt cannot express per domain.
    if (type->traits->memory_overcommit_percent && f.type)
      r_.warning(root["instanceType"], "instanceType",
                 "instance type " + *spec_.instance_type + " overcommits memory (" +
                     std::to_string(type->traits->memory_overcommit_percent) +
                     "%): the KubeVirt backend applies it; on libvirt a host's overcommit is its "
                     "kernel's, not a domain's");
    spec_.origins["sizing"] = "instance type " + *spec_.instance_type +
                              (spec_.origins["instanceType"] == "default" ? " (default)" : "");
  } else if (spec_.memory_bytes || spec_.cpus) {
    sizing = {SizingSource::Knot, spec_.memory_bytes.value_or(kKnotDefaultMemory), 1,
              spec_.cpus.value_or(1)};
    spec_.origins["sizing"] = std::string("template (") +
                              (spec_.memory_bytes && spec_.cpus ? "memory, cpus"
                               : spec_.memory_bytes             ? "memory; 1 vCPU by default"
                                                                : "cpus; 512 MiB by default") +
                              ")";
  } else {
    sizing = {SizingSource::Default, kKnotDefaultMemory, 1, 1};
    spec_.origins["sizing"] = "default";
  }
}

bool SpecBuilder::sizing_known() const {
  return !unknown("memory") && !unknown("cpus") && !unknown("instanceType") &&
         !unknown("resources.cpu") && !unknown("resources.sockets") && !unknown("resources.memory");
}

void SpecBuilder::resolve_preference(const YAML::Node& root) {
  const bool written = !Reader::absent(root["instanceProfile"]);
  if (spec_.instance_profile) spec_.origins["instanceProfile"] = "template";
  if (written || !sizing_known()) return;
  // The default preference only where the VM meets its minimum: a knot template sized below it
  // keeps working as it did, without one.
  const auto* ubuntu = catalog::find_preference(kDefaultPreference);
  const auto& sizing = spec_.sizing;
  if (ubuntu && sizing.memory_bytes >= ubuntu->min_memory_bytes &&
      sizing.vcpus() >= ubuntu->min_vcpus) {
    spec_.instance_profile = kDefaultPreference;
    spec_.origins["instanceProfile"] = "default";
  } else if (ubuntu) {
    spec_.origins["instanceProfile"] =
        std::string("none: the default ") + kDefaultPreference + " needs at least " +
        format_binary_size(ubuntu->min_memory_bytes) + " and " + std::to_string(ubuntu->min_vcpus) +
        " vCPU; this VM has " + format_binary_size(sizing.memory_bytes) + " and " +
        std::to_string(sizing.vcpus());
  }
}

// The preference's minimum, as KubeVirt enforces it; the same VM must run on libvirt.
void SpecBuilder::check_preference_minimums(const YAML::Node& root) {
  const auto* preference =
      spec_.instance_profile ? catalog::find_preference(*spec_.instance_profile) : nullptr;
  if (!preference || !sizing_known()) return;
  const auto& sizing = spec_.sizing;
  if (preference->min_memory_bytes > sizing.memory_bytes)
    r_.error(root["instanceProfile"], "instanceProfile",
             "preference \"" + std::string(preference->name) + "\" needs at least " +
                 format_binary_size(preference->min_memory_bytes) + " of memory; the VM has " +
                 format_binary_size(sizing.memory_bytes));
  if (preference->min_vcpus > sizing.vcpus())
    r_.error(root["instanceProfile"], "instanceProfile",
             "preference \"" + std::string(preference->name) + "\" needs at least " +
                 std::to_string(preference->min_vcpus) + " vCPUs; the VM has " +
                 std::to_string(sizing.vcpus()));
}

// Firmware: secureBoot and efiPersistent need UEFI, explicit or from the preference.
void SpecBuilder::check_firmware(const YAML::Node& root) {
  const auto* preference =
      spec_.instance_profile ? catalog::find_preference(*spec_.instance_profile) : nullptr;
  const YAML::Node firmware = root["firmware"];
  const bool uefi = spec_.firmware.bootloader
                        ? *spec_.firmware.bootloader == Bootloader::Uefi
                        : preference && preference->firmware == catalog::Firmware::Uefi;
  spec_.origins["firmware.bootloader"] = spec_.firmware.bootloader ? "template"
                                         : preference
                                             ? "preference " + std::string(preference->name)
                                             : std::string("default (bios)");
  // Undecidable while the bootloader, or the preference it defaults to, is templated without a
  // value, invalid (reported already) or an unknown preference (reported already).
  const bool loader_given =
      firmware.IsDefined() && firmware.IsMap() && !Reader::absent(firmware["bootloader"]);
  const bool decidable =
      spec_.firmware.bootloader ||
      (!loader_given && !unknown("instanceProfile") && (!spec_.instance_profile || preference));
  if (uefi || !decidable || !firmware.IsDefined() || !firmware.IsMap()) return;
  const bool default_preference = spec_.origins["instanceProfile"] == "default";
  const std::string why = spec_.firmware.bootloader ? "the bootloader is bios"
                          : preference ? std::string(default_preference ? "the default " : "") +
                                             "preference \"" + std::string(preference->name) +
                                             "\" boots with bios"
                                       : "the default bootloader is bios";
  if (spec_.firmware.secure_boot)
    r_.error(firmware["secureBoot"], "firmware.secureBoot",
             "Secure Boot needs bootloader: uefi (" + why + ")");
  if (spec_.firmware.efi_persistent)
    r_.error(firmware["efiPersistent"], "firmware.efiPersistent",
             "persistent EFI NVRAM needs bootloader: uefi (" + why + ")");
}

void SpecBuilder::check_network_and_access(const YAML::Node& root) {
  const auto present = [&](const char* key) { return !Reader::absent(root[key]); };
  if (spec_.netplan_dhcp && spec_.network.mode == NetworkMode::Bridged && present("network"))
    r_.error(root["netplanDhcp"], "netplanDhcp",
             "DHCP on every interface would shadow the static address of bridged mode: use "
             "network.mode nat, or turn netplanDhcp off");
  // external on libvirt: WholeIP is a bridged space's own address on the LAN; a NAT space has
  // none, so it publishes its externalPorts on ports of the host (PortList).
  if (spec_.external && present("network")) {  // network: values are literal
    if (spec_.external_method == ExternalMethod::WholeIP && spec_.network.mode == NetworkMode::Nat)
      r_.warning(root["externalMethod"], "externalMethod",
                 "libvirt refuses this space: WholeIP gives the VM an address of its own, which "
                 "there only a bridged space has (network.mode: bridged; a NAT space publishes its "
                 "externalPorts on ports of the host with PortList); the KubeVirt backend gives it "
                 "a LoadBalancer address");
    else if (spec_.external_method == ExternalMethod::PortList &&
             spec_.network.mode == NetworkMode::Bridged)
      r_.warning(present("externalPorts") ? root["externalPorts"] : root["external"],
                 "externalPorts",
                 "a bridged space is reachable at its own address on libvirt: its externalPorts "
                 "are published only by the KubeVirt backend (a LoadBalancer)");
  }
  if (!spec_.external &&
      (present("externalMethod") || present("externalPorts") || present("externalAllowICMP")))
    r_.warning(present("externalPorts")    ? root["externalPorts"]
               : present("externalMethod") ? root["externalMethod"]
                                           : root["externalAllowICMP"],
               "external", "external access settings have no effect while external is false");
}

void SpecBuilder::resolve(const YAML::Node& root) {
  auto fields = sizing_fields(root);
  check_sizing_conflicts(root, fields);
  if (fields.any_resources && !fields.complete_resources && !fields.type && !fields.knot) {
    // Ignored (a warning above): the VM is sized as if the block were not there.
    spec_.resources = {};
    fields.any_resources = false;
  }
  resolve_sizing(root, fields);
  resolve_preference(root);
  check_preference_minimums(root);
  check_firmware(root);
  check_network_and_access(root);
}

}  // namespace bowline::spec
