// What a node chooses for a space when it starts it (plan::Placed): dedicated host CPUs for
// instance types that ask for them (from server.kvm.dedicated_cpus), and the host PCI devices
// for GPUs named by a device-plugin resource (nvidia.com/GA102GL_A10), each held by one running
// space at a time. What running spaces hold is read from their domains (libvirt's word).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "libvirt/hypervisor.hpp"

namespace bowline::engine {

// "2-7,10" -> {2, 3, 4, 5, 6, 7, 10}; std::invalid_argument for anything else.
std::vector<unsigned> parse_cpu_list(const std::string& text);

// What domains hold: the host CPUs their vCPUs and emulator are pinned to, and the PCI devices
// passed through to them ("0000:01:00.0").
struct Held {
  std::set<unsigned> cpus;
  std::set<std::string> pci;
};
void add_held(Held& held, const std::string& domain_xml);

std::string pci_text(const libvirt::NodeDevice& device);  // "0000:01:00.0"

// The resource name a device plugin gives a PCI device: the vendor's domain (nvidia.com,
// amd.com, intel.com), '/', its product name with blanks as '_' and brackets dropped
// ("GA102GL [A10]" -> nvidia.com/GA102GL_A10). nullopt for other vendors or without a name.
std::optional<std::string> resource_name(const libvirt::NodeDevice& device);

// The first `count` CPUs of `pool` that none holds; nullopt when too few are free.
std::optional<std::vector<unsigned>> choose_cpus(const std::vector<unsigned>& pool,
                                                 const Held& held, unsigned count);

}  // namespace bowline::engine
