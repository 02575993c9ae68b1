// bowline catalog instancetypes|preferences: the built-in sizing and guest-OS tables.
#include <iostream>

#include "catalog/catalog.hpp"
#include "cli/output.hpp"
#include "cli/verbs.hpp"
#include "spec/quantity.hpp"

namespace bowline::cli {
namespace {

using json = nlohmann::ordered_json;

void list_instance_types(const std::string& output) {
  json all = json::array();
  std::vector<std::vector<std::string>> rows{
      {"NAME", "VCPUS", "MEMORY", "CPU", "HUGEPAGES", "NOTES"}};
  for (const auto& t : catalog::instance_types()) {
    const auto& traits = *t.traits;
    std::string notes;
    auto note = [&](bool on, const char* text) {
      if (on) notes += (notes.empty() ? "" : ", ") + std::string(text);
    };
    note(traits.isolate_emulator_thread, "isolated emulator thread");
    note(traits.vnuma, "vNUMA");
    note(traits.realtime, "realtime");
    note(traits.memory_overcommit_percent > 0, "memory overcommitted");
    note(!t.gpus.empty(), "GPU");
    note(traits.deprecated, "deprecated");
    rows.push_back({std::string(t.name), std::to_string(t.vcpus), std::string(t.memory_text),
                    traits.dedicated_cpu ? "dedicated" : "shared",
                    t.hugepages_size.empty() ? "-" : std::string(t.hugepages_size), notes});
    json gpus = json::array();
    for (auto g : t.gpus) gpus.push_back(std::string(g));
    all.push_back({{"name", t.name},
                   {"series", traits.series},
                   {"class", traits.class_name},
                   {"vcpus", t.vcpus},
                   {"memory", t.memory_text},
                   {"memoryBytes", t.memory_bytes},
                   {"dedicatedCpu", traits.dedicated_cpu},
                   {"isolateEmulatorThread", traits.isolate_emulator_thread},
                   {"vnuma", traits.vnuma},
                   {"realtime", traits.realtime},
                   {"hugepages", t.hugepages_size.empty() ? json(nullptr) : json(t.hugepages_size)},
                   {"memoryOvercommitPercent", traits.memory_overcommit_percent},
                   {"gpus", gpus},
                   {"deprecated", traits.deprecated},
                   {"description", traits.description}});
  }
  std::cout << (output == "json" ? all.dump(2) + "\n" : format_table(rows));
}

void list_preferences(const std::string& output) {
  json all = json::array();
  std::vector<std::vector<std::string>> rows{
      {"NAME", "GUEST OS", "FIRMWARE", "DISK", "NIC", "MINIMUM"}};
  for (const auto& p : catalog::preferences()) {
    std::string firmware = p.firmware == catalog::Firmware::Uefi ? "uefi" : "bios";
    if (p.secure_boot) firmware += "+secureboot";
    if (p.efi_persistent) firmware += "+persistent";
    std::string minimum;
    if (p.min_vcpus) minimum += std::to_string(p.min_vcpus) + " vCPU";
    if (p.min_memory_bytes)
      minimum += (minimum.empty() ? "" : ", ") + spec::format_binary_size(p.min_memory_bytes);
    rows.push_back({std::string(p.name), std::string(p.guest_os), firmware, std::string(p.disk_bus),
                    std::string(p.nic_model), minimum.empty() ? "-" : minimum});
    all.push_back({{"name", p.name},
                   {"guestOs", p.guest_os},
                   {"firmware", p.firmware == catalog::Firmware::Uefi ? "uefi" : "bios"},
                   {"secureBoot", p.secure_boot},
                   {"smm", p.smm},
                   {"efiPersistent", p.efi_persistent},
                   {"tpmPersistent", p.tpm_persistent},
                   {"diskBus", p.disk_bus},
                   {"nicModel", p.nic_model},
                   {"architecture", p.architecture},
                   {"minVcpus", p.min_vcpus},
                   {"minMemoryBytes", p.min_memory_bytes},
                   {"deprecated", p.deprecated}});
  }
  std::cout << (output == "json" ? all.dump(2) + "\n" : format_table(rows));
}

}  // namespace

void add_catalog_verbs(CLI::App& app, int& exit_code) {
  auto* group = app.add_subcommand("catalog", "The built-in instance types and preferences");
  group->require_subcommand(1);
  auto output = std::make_shared<std::string>("table");
  auto* types =
      group->add_subcommand("instancetypes", "List instance types (sizes and CPU/memory traits)");
  types->add_option("--output,-o", *output, "Output format")
      ->check(CLI::IsMember({"table", "json"}));
  types->callback([output, &exit_code] {
    list_instance_types(*output);
    exit_code = 0;
  });
  auto* prefs = group->add_subcommand("preferences", "List preferences (guest OS defaults)");
  prefs->add_option("--output,-o", *output, "Output format")
      ->check(CLI::IsMember({"table", "json"}));
  prefs->callback([output, &exit_code] {
    list_preferences(*output);
    exit_code = 0;
  });
}

}  // namespace bowline::cli
