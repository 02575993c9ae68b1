// The node's report: what the templates need, every check in order, and the report as JSON.
// The checks themselves live by kind in node_check_*.cpp (node_check_kinds.hpp).
#include "engine/node_check.hpp"

#include <algorithm>

#include "engine/dhcp_lease_check.hpp"
#include "engine/node_check_kinds.hpp"
#include "engine/traffic_filter.hpp"
#include "spec/validators.hpp"

namespace bowline::engine {

const char* to_string(CheckStatus status) {
  switch (status) {
    case CheckStatus::Ok:
      return "ok";
    case CheckStatus::Warn:
      return "warn";
    case CheckStatus::Missing:
      return "missing";
  }
  return "missing";
}

namespace {

void add_once(std::vector<std::string>& list, const std::string& value) {
  if (!value.empty() && std::find(list.begin(), list.end(), value) == list.end())
    list.push_back(value);
}

// The expression syntax a value keeps when the template is loaded without values.
bool templated(const std::string& value) {
  return value.find("${{") != std::string::npos;
}

}  // namespace

void NodeRequirements::add(const spec::Spec& spec) {
  if (!templated(spec.network.bridge)) {
    if (spec.network.mode == spec::NetworkMode::Bridged)
      add_once(bridges, spec.network.bridge);
    else
      add_once(networks, spec.network.bridge);
  }
  for (const auto& network : spec.networks)
    if (!templated(network)) add_once(networks, network);
  auto add_device = [&](const spec::Device& device) {
    const auto same = [&](const spec::Device& d) { return d.text == device.text; };
    if (std::none_of(devices.begin(), devices.end(), same)) devices.push_back(device);
  };
  for (const auto& device : spec.devices) add_device(device);
  if (spec.external && spec.external_method == spec::ExternalMethod::PortList &&
      spec.network.mode == spec::NetworkMode::Nat)
    external_ports = true;
  // GPUs given as PCI addresses; a device-plugin name is resolved when the space starts.
  for (const auto& gpu : spec.gpus)
    if (auto device = spec::gpu_pci_address(gpu)) add_device(*device);
}

namespace node_checks {

Check make_check(std::string name, std::string title) {
  Check c;
  c.name = std::move(name);
  c.title = std::move(title);
  return c;
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

std::string first_line(const std::string& text) {
  auto line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::optional<Identity> qemu_identity(const NodeCheckOptions& options) {
  for (const auto& user : options.qemu_users)
    if (auto id = lookup_identity(user)) return id;
  return std::nullopt;
}

}  // namespace node_checks

NodeReport check_node(const NodeCheckOptions& options, const NodeCheckContext& context) {
  using namespace node_checks;
  NodeReport report;
  report.name = options.node_name;
  report.uri = context.uri;
  report.domain_type_setting = options.domain_type;
  const bool auto_type = options.domain_type == "auto";
  report.domain_type = options.domain_type;
  if (auto_type) {
    report.domain_type = context.kvm && context.kvm->usable ? "kvm" : "qemu";
    if (report.domain_type == "qemu")
      report.warnings.push_back(kSoftwareEmulationWarning);  // why: the kvm-runs check
  }
  auto effective = options;
  effective.domain_type = report.domain_type;
  const auto qemu = qemu_identity(options);

  if (options.domain_type != "qemu") {
    auto device = check_kvm(options, qemu);
    if (auto_type && device.status != CheckStatus::Ok) {
      device.status = CheckStatus::Warn;
      device.required = false;
    }
    report.checks.push_back(device);
    report.checks.push_back(check_kvm_runs(options, context.kvm));
  }
  report.checks.push_back(check_libvirt(context));
  report.checks.push_back(check_qemu_img(options, context.runner));
  report.checks.push_back(check_domain_type(effective, context.hypervisor));
  report.checks.push_back(check_guest_filter(context, options));
  for (const auto& where : storage_paths(options))
    report.checks.push_back(check_storage_path(where, options, qemu));
  if (auto unkeyed = check_unkeyed_cache(options)) report.checks.push_back(std::move(*unkeyed));
  for (const auto& bridge : options.requirements.bridges)
    report.checks.push_back(check_bridge(bridge, context.host));
  for (const auto& network : options.requirements.networks) {
    report.checks.push_back(check_network(network, context.hypervisor));
    report.checks.push_back(check_one_lease_per_mac(network, context.hypervisor));
  }
  if (options.requirements.external_ports) report.checks.push_back(check_ip_forward(options));
  add_device_checks(report, options, context);

  const bool ready = std::none_of(report.checks.begin(), report.checks.end(), [](const Check& c) {
    return c.required && c.status != CheckStatus::Ok;
  });
  if (ready) report.runtimes.push_back("kvm");
  return report;
}

nlohmann::ordered_json to_json(const NodeReport& report) {
  using json = nlohmann::ordered_json;
  json checks = json::array();
  for (const auto& c : report.checks)
    checks.push_back({{"name", c.name},
                      {"title", c.title},
                      {"status", to_string(c.status)},
                      {"required", c.required},
                      {"detail", c.detail},
                      {"fix", c.fix}});
  json devices = json::array();
  for (const auto& d : report.passthrough_devices) {
    json device = {
        {"name", d.name},          {"kind", d.kind == libvirt::NodeDeviceKind::Pci ? "pci" : "usb"},
        {"vendorId", d.vendor_id}, {"productId", d.product_id},
        {"vendor", d.vendor},      {"product", d.product},
        {"driver", d.driver}};
    device["iommuGroup"] = d.iommu_group ? json(*d.iommu_group) : json(nullptr);
    devices.push_back(device);
  }
  return {{"name", report.name},
          {"uri", report.uri},
          {"domainType", report.domain_type},
          {"domainTypeSetting", report.domain_type_setting},
          {"warnings", report.warnings},
          {"runtimes", report.runtimes},
          {"ready", report.ready()},
          {"checks", checks},
          {"devices", devices}};
}

}  // namespace bowline::engine
