// LibvirtHypervisor's calls on the host: its PCI and USB devices and the capabilities of a
// domain type; and the parsers for the XML libvirt describes them in.
#include <pugixml.hpp>

#include <cstdint>
#include <cstdlib>
#include <utility>

#include "libvirt/libvirt_connection.hpp"
#include "libvirt/libvirt_handles.hpp"
#include "libvirt/libvirt_hypervisor.hpp"

namespace bowline::libvirt {

using namespace detail;

namespace {

// "0x10de" or "16" (libvirt writes ids in hex and addresses in decimal).
std::uint32_t number(const char* text) {
  const std::string_view s(text);
  if (s.empty()) return 0;
  const bool hex = s.starts_with("0x") || s.starts_with("0X");
  return static_cast<std::uint32_t>(std::strtoul(text, nullptr, hex ? 16 : 10));
}

}  // namespace

// ---- XML parsers -------------------------------------------------------------------------

std::optional<NodeDevice> parse_node_device(std::string_view xml) {
  pugi::xml_document doc;
  if (!doc.load_buffer(xml.data(), xml.size())) return std::nullopt;
  const auto device = doc.child("device");
  if (!device) return std::nullopt;
  NodeDevice out;
  out.name = device.child_value("name");
  out.parent = device.child_value("parent");
  out.driver = device.child("driver").child_value("name");
  for (const auto capability : device.children("capability")) {
    const std::string_view type = capability.attribute("type").value();
    if (type != "pci" && type != "usb_device") continue;
    out.vendor_id = number(capability.child("vendor").attribute("id").value());
    out.product_id = number(capability.child("product").attribute("id").value());
    out.vendor = capability.child_value("vendor");
    out.product = capability.child_value("product");
    if (type == "pci") {
      out.kind = NodeDeviceKind::Pci;
      out.pci_domain = number(capability.child_value("domain"));
      out.pci_bus = number(capability.child_value("bus"));
      out.pci_slot = number(capability.child_value("slot"));
      out.pci_function = number(capability.child_value("function"));
      out.pci_class = number(capability.child_value("class"));
      if (const auto group = capability.child("iommuGroup"))
        if (const auto attribute = group.attribute("number"))
          out.iommu_group = number(attribute.value());
    } else {
      out.kind = NodeDeviceKind::Usb;
      out.usb_bus = number(capability.child_value("bus"));
      out.usb_device = number(capability.child_value("device"));
    }
    return out;
  }
  return std::nullopt;
}

DomainCapabilities parse_domain_capabilities(std::string_view xml) {
  DomainCapabilities out;
  pugi::xml_document doc;
  const auto root =
      doc.load_buffer(xml.data(), xml.size()) ? doc.child("domainCapabilities") : pugi::xml_node();
  if (!root) {
    out.reason = "libvirt returned domain capabilities that are not readable XML";
    return out;
  }
  out.domain_type = root.child_value("domain");
  out.emulator = root.child_value("path");
  out.machine = root.child_value("machine");
  out.arch = root.child_value("arch");
  out.max_vcpus = number(root.child("vcpu").attribute("max").value());
  out.requires_kvm = out.domain_type == "kvm";
  const auto os = root.child("os");
  for (const auto e : os.children("enum"))
    if (std::string_view(e.attribute("name").value()) == "firmware")
      for (const auto value : e.children("value")) out.firmware.emplace_back(value.child_value());
  out.supported = std::string_view(os.attribute("supported").value()) != "no";
  if (!out.supported) out.reason = "libvirt reports no supported guest OS for this domain type";
  return out;
}

// ---- LibvirtHypervisor -------------------------------------------------------------------

std::vector<NodeDevice> LibvirtHypervisor::node_devices() {
  const auto connection = impl_->connection();
  virNodeDevicePtr* raw = nullptr;
  const int n = virConnectListAllNodeDevices(
      connection.get(), &raw,
      VIR_CONNECT_LIST_NODE_DEVICES_CAP_PCI_DEV | VIR_CONNECT_LIST_NODE_DEVICES_CAP_USB_DEV);
  if (n < 0) throw last_error("libvirt at \"" + uri() + "\"", "list node devices");
  std::vector<NodeDev> devices;
  devices.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) devices.emplace_back(raw[i]);
  std::free(raw);
  std::vector<NodeDevice> out;
  for (const auto& device : devices) {
    CString xml(virNodeDeviceGetXMLDesc(device.get(), 0));
    if (!xml) {
      const char* name = virNodeDeviceGetName(device.get());
      auto error =
          last_error("node device \"" + std::string(name ? name : "?") + "\"", "read the XML");
      if (error.code() == VIR_ERR_NO_NODE_DEVICE) continue;  // unplugged meanwhile
      throw error;
    }
    if (auto parsed = parse_node_device(xml.get())) out.push_back(std::move(*parsed));
  }
  return out;
}

DomainCapabilities LibvirtHypervisor::domain_capabilities(const std::string& domain_type) {
  const auto connection = impl_->connection();
  CString xml(virConnectGetDomainCapabilities(connection.get(), nullptr, nullptr, nullptr,
                                              domain_type.c_str(), 0));
  if (!xml) {
    auto error = last_error("domain type \"" + domain_type + "\"", "probe the capabilities");
    const int code = error.code();
    if (!(error.is_unsupported() || code == VIR_ERR_INVALID_ARG ||
          code == VIR_ERR_CONFIG_UNSUPPORTED))
      throw error;
    DomainCapabilities out;
    out.domain_type = domain_type;
    out.requires_kvm = domain_type == "kvm";
    out.reason = error.cause();
    return out;
  }
  auto out = parse_domain_capabilities(xml.get());
  if (out.domain_type.empty()) out.domain_type = domain_type;
  out.requires_kvm = domain_type == "kvm";
  return out;
}

}  // namespace bowline::libvirt
