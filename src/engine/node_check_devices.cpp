// The devices' checks: each passthrough device a template names, and what this host could pass
// through.
#include <algorithm>
#include <sstream>

#include "engine/devices.hpp"
#include "engine/node_check_kinds.hpp"

namespace bowline::engine::node_checks {

namespace {

std::string describe(const libvirt::NodeDevice& d) {
  std::ostringstream out;
  out << d.name;
  if (!d.vendor.empty() || !d.product.empty()) {
    out << " (" << d.vendor;
    if (!d.vendor.empty() && !d.product.empty()) out << " ";
    out << d.product << ")";
  }
  return out.str();
}

Check check_device(const spec::Device& want, const std::vector<libvirt::NodeDevice>& devices) {
  auto c =
      make_check("device:" + want.text, "device " + want.text + " present and passthrough-capable");
  const auto it = std::find_if(devices.begin(), devices.end(),
                               [&](const libvirt::NodeDevice& d) { return matches(want, d); });
  if (it == devices.end()) {
    c.status = CheckStatus::Missing;
    c.detail = "this host has no device " + want.text;
    c.fix = "plug it in, or drop it from the template (virsh nodedev-list lists the devices)";
    return c;
  }
  if (!libvirt::passthrough_capable(*it)) {
    c.status = CheckStatus::Missing;
    c.detail = describe(*it) + " has no IOMMU group: it cannot be passed through";
    c.fix =
        "enable the IOMMU (intel_iommu=on or amd_iommu=on on the kernel command line, VT-d or "
        "AMD-Vi in the firmware) and reboot";
    return c;
  }
  c.detail = describe(*it);
  if (it->iommu_group) c.detail += ", IOMMU group " + std::to_string(*it->iommu_group);
  return c;
}

}  // namespace

void add_device_checks(NodeReport& report, const NodeCheckOptions& options,
                       const NodeCheckContext& context) {
  std::vector<libvirt::NodeDevice> devices;
  std::string device_error;
  if (context.hypervisor) {
    try {
      devices = context.hypervisor->node_devices();
    } catch (const std::exception& e) {
      device_error = e.what();
    }
  }
  for (const auto& device : devices)
    if (libvirt::passthrough_capable(device)) report.passthrough_devices.push_back(device);
  for (const auto& want : options.requirements.devices) {
    if (!context.hypervisor || !device_error.empty()) {
      auto c = make_check("device:" + want.text,
                          "device " + want.text + " present and passthrough-capable");
      c.status = CheckStatus::Missing;
      c.detail = device_error.empty() ? "not checked: libvirt is not reachable" : device_error;
      report.checks.push_back(c);
      continue;
    }
    report.checks.push_back(check_device(want, devices));
  }
  // What could be handed to a space: information, never a reason to withhold the runtime.
  auto summary = make_check("devices", "passthrough-capable devices");
  summary.required = false;
  if (!device_error.empty()) {
    summary.status = CheckStatus::Warn;
    summary.detail = device_error;
  } else if (!context.hypervisor) {
    summary.status = CheckStatus::Warn;
    summary.detail = "not checked: libvirt is not reachable";
  } else {
    std::vector<std::string> names;
    for (const auto& d : report.passthrough_devices) names.push_back(describe(d));
    summary.detail = names.empty() ? "none" : join(names, "; ");
  }
  report.checks.push_back(summary);
}

}  // namespace bowline::engine::node_checks
