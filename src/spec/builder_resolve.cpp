// Rules that span fields, and the VM's size: complete resources > instanceType > knot's
// memory/cpus > defaults (512 MiB, 1 vCPU, as knot).
#include "catalog/catalog.hpp"
#include "spec/builder.hpp"
#include "spec/quantity.hpp"

namespace bowline::spec {
namespace {

constexpr std::uint64_t kDefaultMemory = 512ull << 20;
constexpr std::uint64_t kUint32Max = 4294967295ull;

}  // namespace

void SpecBuilder::resolve(const YAML::Node& root) {
  const auto present = [&](const char* key) { return !Reader::absent(root[key]); };
  const YAML::Node resources = root["resources"];
  const auto res_present = [&](const char* key) {
    return resources.IsDefined() && resources.IsMap() && !Reader::absent(resources[key]);
  };
  const bool knot_sizing = present("memory") || present("cpus");
  const bool any_resources = res_present("cpu") || res_present("sockets") || res_present("memory");
  const bool complete_resources =
      res_present("cpu") && res_present("sockets") && res_present("memory");
  const bool has_type = present("instanceType") &&
                        !(root["instanceType"].IsScalar() && root["instanceType"].Scalar().empty());

  if (knot_sizing && any_resources) {
    r_.error(
        present("memory") ? root["memory"] : root["cpus"], present("memory") ? "memory" : "cpus",
        "memory/cpus and resources both size the VM: keep one (resources: {cpu, sockets, memory})");
  } else if (knot_sizing && has_type) {
    r_.error(present("memory") ? root["memory"] : root["cpus"],
             present("memory") ? "memory" : "cpus",
             "memory/cpus and instanceType both size the VM: keep one");
  } else if (any_resources && !complete_resources) {
    std::string given, missing;
    for (const char* key : {"cpu", "sockets", "memory"})
      (res_present(key) ? given : missing) +=
          (std::string(res_present(key) ? given : missing).empty() ? "" : ", ") +
          std::string("resources.") + key;
    if (has_type)
      r_.error(resources, "resources",
               "instanceType \"" +
                   spec_.instance_type.value_or(root["instanceType"].as<std::string>("")) +
                   "\" cannot be combined with resources that size the VM only in part (" + given +
                   " given; " + missing +
                   " missing): give cpu, sockets and memory together, or remove resources and let "
                   "the instance type size the VM");
    else
      r_.error(resources, "resources",
               "resources size the VM only with cpu, sockets and memory together (" + missing +
                   " missing)");
  } else if (complete_resources && has_type) {
    r_.warning(root["instanceType"], "instanceType",
               "ignored: resources size the VM, so the whole instance type is dropped (with any "
               "dedicated CPUs, hugepages or NUMA it carries)");
  }

  // Sizing from known values.
  auto& sizing = spec_.sizing;
  if (spec_.resources.sizes_vm()) {
    sizing = {SizingSource::Resources, *spec_.resources.memory_bytes, *spec_.resources.sockets,
              *spec_.resources.cpu};
    if (static_cast<std::uint64_t>(sizing.sockets) * sizing.cores > kUint32Max)
      r_.error(resources, "resources",
               "cpu x sockets = " +
                   std::to_string(static_cast<std::uint64_t>(sizing.sockets) * sizing.cores) +
                   " vCPUs, above 4294967295");
  } else if (const auto* type = spec_.instance_type
                                    ? catalog::find_instance_type(*spec_.instance_type)
                                    : nullptr) {
    sizing = {SizingSource::InstanceType, type->memory_bytes, type->vcpus, 1};
  } else if (spec_.memory_bytes || spec_.cpus) {
    sizing = {SizingSource::Knot, spec_.memory_bytes.value_or(kDefaultMemory), 1,
              spec_.cpus.value_or(1)};
  } else {
    sizing = {SizingSource::Default, kDefaultMemory, 1, 1};
  }
  const bool sizing_known = !unknown("memory") && !unknown("cpus") && !unknown("instanceType") &&
                            !unknown("resources.cpu") && !unknown("resources.sockets") &&
                            !unknown("resources.memory");

  // The preference's minimum, as KubeVirt enforces it; the same VM must run on libvirt.
  const auto* preference =
      spec_.instance_profile ? catalog::find_preference(*spec_.instance_profile) : nullptr;
  if (preference && sizing_known) {
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
  const YAML::Node firmware = root["firmware"];
  const bool uefi = spec_.firmware.bootloader
                        ? *spec_.firmware.bootloader == Bootloader::Uefi
                        : preference && preference->firmware == catalog::Firmware::Uefi;
  // Undecidable while the bootloader, or the preference it defaults to, is templated without a
  // value, invalid (reported already) or an unknown preference (reported already).
  const bool loader_given =
      firmware.IsDefined() && firmware.IsMap() && !Reader::absent(firmware["bootloader"]);
  const bool decidable =
      spec_.firmware.bootloader ||
      (!loader_given && !unknown("instanceProfile") && (!spec_.instance_profile || preference));
  if (!uefi && decidable && firmware.IsDefined() && firmware.IsMap()) {
    const std::string why =
        spec_.firmware.bootloader ? "the bootloader is bios"
        : preference ? "preference \"" + std::string(preference->name) + "\" boots with bios"
                     : "the default bootloader is bios";
    if (spec_.firmware.secure_boot)
      r_.error(firmware["secureBoot"], "firmware.secureBoot",
               "Secure Boot needs bootloader: uefi (" + why + ")");
    if (spec_.firmware.efi_persistent)
      r_.error(firmware["efiPersistent"], "firmware.efiPersistent",
               "persistent EFI NVRAM needs bootloader: uefi (" + why + ")");
  }

  if (spec_.netplan_dhcp && spec_.network.mode == NetworkMode::Bridged && present("network"))
    r_.error(root["netplanDhcp"], "netplanDhcp",
             "DHCP on every interface would shadow the static address of bridged mode: use "
             "network.mode nat, or turn netplanDhcp off");

  if (!spec_.external &&
      (present("externalMethod") || present("externalPorts") || present("externalAllowICMP")))
    r_.warning(present("externalPorts")    ? root["externalPorts"]
               : present("externalMethod") ? root["externalMethod"]
                                           : root["externalAllowICMP"],
               "external", "external access settings have no effect while external is false");
}

}  // namespace bowline::spec
