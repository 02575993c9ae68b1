#include "engine/devices.hpp"

#include "spec/validators.hpp"

namespace bowline::engine {

std::vector<spec::Device> passthrough_devices(const spec::Spec& spec) {
  auto devices = spec.devices;
  for (const auto& gpu : spec.gpus)
    if (auto device = spec::gpu_pci_address(gpu)) devices.push_back(*device);
  return devices;
}

bool matches(const spec::Device& w, const libvirt::NodeDevice& d) {
  if (const auto* pci = std::get_if<spec::PciAddress>(&w.address))
    return d.kind == libvirt::NodeDeviceKind::Pci && d.pci_domain == pci->domain &&
           d.pci_bus == pci->bus && d.pci_slot == pci->slot && d.pci_function == pci->function;
  if (const auto* usb = std::get_if<spec::UsbAddress>(&w.address))
    return d.kind == libvirt::NodeDeviceKind::Usb && d.usb_bus == usb->bus &&
           d.usb_device == usb->device;
  const auto& id = std::get<spec::UsbId>(w.address);
  return d.kind == libvirt::NodeDeviceKind::Usb && d.vendor_id == id.vendor &&
         d.product_id == id.product;
}

std::optional<libvirt::NodeDevice> find_node_device(const std::vector<libvirt::NodeDevice>& node,
                                                    const spec::Device& wanted) {
  for (const auto& d : node)
    if (matches(wanted, d)) return d;
  return std::nullopt;
}

std::vector<std::string> device_problems(const std::vector<libvirt::NodeDevice>& node,
                                         const std::vector<spec::Device>& wanted) {
  std::vector<std::string> problems;
  for (const auto& w : wanted) {
    const auto found = find_node_device(node, w);
    if (!found)
      problems.push_back("device " + w.text + " is not on this node");
    else if (!libvirt::passthrough_capable(*found))
      problems.push_back("device " + w.text + " (" + found->name +
                         ") cannot be passed through: it has no IOMMU group (enable VT-d/AMD-Vi "
                         "and the IOMMU in the kernel)");
  }
  return problems;
}

}  // namespace bowline::engine
