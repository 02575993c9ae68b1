// Instance types and preferences: the cluster-wide sizing and guest-OS defaults that
// Cozystack ships (KubeVirt common-instancetypes), as data. Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bowline::catalog {

enum class Firmware { Bios, Uefi };

// What an instance-type series promises beyond vCPUs and memory.
struct SeriesTraits {
  std::string_view series;       // "u1", "cx1", ...
  std::string_view class_name;   // KubeVirt class label, e.g. "general.purpose"
  std::string_view description;  // one line, our words
  bool dedicated_cpu = false;    // vCPUs pinned to exclusive physical cores
  bool isolate_emulator_thread = false;
  bool vnuma = false;  // guest NUMA topology mirrors the host's
  bool realtime = false;
  bool deprecated = false;
  std::uint32_t memory_overcommit_percent = 0;  // 0: none
};

struct InstanceType {
  std::string_view name;  // "u1.medium"
  std::uint32_t vcpus = 0;
  std::uint64_t memory_bytes = 0;
  std::string_view memory_text;     // as the catalog writes it: "4Gi"
  std::string_view hugepages_size;  // "", "2Mi" or "1Gi"
  const SeriesTraits* traits = nullptr;
  std::vector<std::string_view> gpus;  // device names a type brings (gn1 only)
};

struct Preference {
  std::string_view name;      // "ubuntu"
  std::string_view guest_os;  // "Ubuntu"
  Firmware firmware = Firmware::Bios;
  bool secure_boot = false;
  bool smm = false;
  bool efi_persistent = false;
  bool tpm_persistent = false;
  std::string_view disk_bus = "virtio";   // virtio | sata | scsi
  std::string_view nic_model = "virtio";  // virtio | e1000 | e1000e | rtl8139
  std::string_view architecture = "amd64";
  std::uint32_t min_vcpus = 0;         // 0: no requirement
  std::uint64_t min_memory_bytes = 0;  // 0: no requirement
  bool deprecated = false;
};

std::span<const InstanceType> instance_types();
std::span<const Preference> preferences();

const InstanceType* find_instance_type(std::string_view name);
const Preference* find_preference(std::string_view name);

}  // namespace bowline::catalog
