// A space's dedicated CPUs and resource-named GPUs, chosen when it starts (placement.hpp).
#include <algorithm>
#include <cstdio>

#include "engine/devices.hpp"
#include "engine/engine_error.hpp"
#include "engine/libvirt_node.hpp"
#include "engine/placement.hpp"

namespace bowline::engine {

plan::Placed LibvirtNode::place(const NodeSpace& s, const plan::Plan& plan) {
  const auto& spec = s.spec;
  plan::Placed placed;
  const auto cpus = plan::dedicated_cpus_needed(plan);
  const auto gpus = plan::resource_gpus(spec);
  const auto devices_wanted = passthrough_devices(spec);
  if ((cpus == 0 || s_.dedicated_cpus.empty()) && gpus.empty() && devices_wanted.empty())
    return placed;

  // What the other spaces of this node hold, by their domains.
  Held held;
  for (const auto& other : s.neighbours()) {
    try {
      add_held(held, hypervisor_.domain_xml(other.domain_name));
    } catch (const libvirt::HypervisorError&) {  // not defined yet: holds nothing
    }
  }

  // A device given by PCI address that another space got by name (its template does not say).
  for (const auto& d : devices_wanted)
    if (const auto* pci = std::get_if<spec::PciAddress>(&d.address)) {
      char text[32];
      std::snprintf(text, sizeof text, "%04x:%02x:%02x.%x", pci->domain, pci->bus, pci->slot,
                    pci->function);
      if (held.pci.count(text))
        throw EngineError(EngineError::Kind::Conflict,
                          "device " + d.text + " is held by another running space: stop it first");
    }

  if (cpus > 0 && !s_.dedicated_cpus.empty()) {
    const auto chosen = choose_cpus(s_.dedicated_cpus, held, cpus);
    if (!chosen) {
      std::size_t free = 0;
      for (auto c : s_.dedicated_cpus) free += held.cpus.count(c) ? 0 : 1;
      throw EngineError(EngineError::Kind::Conflict, "the space needs " + std::to_string(cpus) +
                                                         " dedicated CPUs; " +
                                                         std::to_string(free) + " of the " +
                                                         std::to_string(s_.dedicated_cpus.size()) +
                                                         " in server.kvm.dedicated_cpus are free");
    }
    placed.cpus = *chosen;
    for (auto c : placed.cpus)
      if (auto node = host_.cpu_numa_node(c))
        if (std::find(placed.numa_nodes.begin(), placed.numa_nodes.end(), *node) ==
            placed.numa_nodes.end())
          placed.numa_nodes.push_back(*node);
  }

  if (!gpus.empty()) {
    const auto devices = hypervisor_.node_devices();
    std::set<std::string> taken = held.pci;
    for (const auto& gpu : gpus) {
      const libvirt::NodeDevice* found = nullptr;
      std::string here;
      for (const auto& d : devices) {
        const auto name = resource_name(d);
        if (!name) continue;
        if (here.find(*name) == std::string::npos) here += (here.empty() ? "" : ", ") + *name;
        if (*name == gpu && libvirt::passthrough_capable(d) && !taken.count(pci_text(d))) {
          found = &d;
          break;
        }
      }
      if (!found)
        throw EngineError(EngineError::Kind::Conflict,
                          "no free host device for gpu " + gpu + " on this node (it has: " +
                              (here.empty() ? std::string("no GPUs it can name") : here) + ")");
      taken.insert(pci_text(*found));
      placed.gpus.push_back({gpu, spec::PciAddress{found->pci_domain, found->pci_bus,
                                                   found->pci_slot, found->pci_function}});
    }
  }
  return placed;
}

}  // namespace bowline::engine
