#include "engine/devices.hpp"

#include "spec/validators.hpp"

namespace bowline::engine {

std::vector<spec::Device> passthrough_devices(const spec::Spec& spec) {
  auto devices = spec.devices;
  for (const auto& gpu : spec.gpus) {
    spec::Device d;
    if (spec::parse_device(gpu, d).empty() && d.kind == spec::DeviceKind::Pci) devices.push_back(d);
  }
  return devices;
}

bool same_device(const spec::Device& a, const spec::Device& b) {
  return a.kind == b.kind && a.a == b.a && a.b == b.b && a.c == b.c && a.d == b.d;
}

std::optional<libvirt::NodeDevice> find_node_device(const std::vector<libvirt::NodeDevice>& node,
                                                    const spec::Device& w) {
  for (const auto& d : node) {
    switch (w.kind) {
      case spec::DeviceKind::Pci:
        if (d.kind == libvirt::NodeDeviceKind::Pci && d.pci_domain == w.a && d.pci_bus == w.b &&
            d.pci_slot == w.c && d.pci_function == w.d)
          return d;
        break;
      case spec::DeviceKind::Usb:
        if (d.kind == libvirt::NodeDeviceKind::Usb && d.usb_bus == w.a && d.usb_device == w.b)
          return d;
        break;
      case spec::DeviceKind::VendorProduct:
        if (d.kind == libvirt::NodeDeviceKind::Usb && d.vendor_id == w.a && d.product_id == w.b)
          return d;
        break;
    }
  }
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
