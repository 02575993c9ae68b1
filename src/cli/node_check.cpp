// bowline node check: is this host ready to run spaces? Every prerequisite with its fix; exit
// 0 when the node would offer the kvm runtime, 1 when not.
#include <unistd.h>

#include <iostream>
#include <memory>

#include "cli/app.hpp"
#include "cli/client_format.hpp"
#include "cli/template_input.hpp"
#include "cli/verbs.hpp"
#include "engine/host_probe.hpp"
#include "engine/node_check.hpp"
#include "libvirt/libvirt_hypervisor.hpp"
#include "util/process.hpp"

namespace bowline::cli {
namespace {

struct NodeCheckArgs {
  bool json = false;
  std::string output = "table";
  std::string uri = "qemu:///system";
  std::string domain_type = "auto";
  std::string guest_filter = "auto";
  std::string images_path = "/var/lib/libvirt/images/bowline";
  std::string cloud_image_path;  // default <images path>/cloud-images
  std::string base_image_path;   // default <images path>/base
  std::vector<std::string> templates;
};

std::string host_name() {
  char buffer[256] = {0};
  if (::gethostname(buffer, sizeof buffer - 1) != 0 || !*buffer) return "local";
  return buffer;
}

int node_check(const NodeCheckArgs& a) {
  engine::NodeCheckOptions options;
  options.node_name = host_name();
  options.domain_type = a.domain_type;
  options.guest_filter = a.guest_filter;
  options.images_path = a.images_path;
  options.cloud_image_path =
      a.cloud_image_path.empty() ? a.images_path + "/cloud-images" : a.cloud_image_path;
  options.base_image_path = a.base_image_path.empty() ? a.images_path + "/base" : a.base_image_path;
  for (const auto& file : a.templates) {
    const auto loaded = load_template(file, nullptr);
    if (!loaded) return loaded.exit_code;
    options.requirements.add(*loaded.spec);
  }

  engine::NodeCheckContext context;
  context.uri = a.uri;
  std::unique_ptr<libvirt::LibvirtHypervisor> hypervisor;
  try {
    hypervisor =
        std::make_unique<libvirt::LibvirtHypervisor>(libvirt::LibvirtOptions{.uri = a.uri});
    context.hypervisor = hypervisor.get();
  } catch (const std::exception& e) {
    context.connect_error = e.what();
  }
  engine::SysfsHostProbe host;
  util::SystemProcessRunner runner;
  context.host = &host;
  context.runner = &runner;
  // Only starting QEMU proves KVM: a throwaway domain, as the server does at start-up.
  engine::KvmVerdict verdict;
  if (a.domain_type != "qemu" && context.hypervisor) {
    engine::KvmProbeOptions probe_options;
    probe_options.work_dir = a.images_path;
    engine::LibvirtKvmProbe probe(*context.hypervisor, probe_options);
    verdict = probe.probe();
    context.kvm = &verdict;
  }

  const auto report = engine::check_node(options, context);
  const auto json = engine::to_json(report);
  if (a.json || a.output == "json")
    std::cout << json.dump(2) << "\n";
  else
    std::cout << format_node_report(json);
  return report.ready() ? kExitOk : kExitInvalid;
}

}  // namespace

void add_node_verbs(CLI::App& app, int& exit_code) {
  auto* group = app.add_subcommand("node", "The server's nodes, and this host as a bowline node");
  group->require_subcommand(1);
  add_node_client_verbs(*group, exit_code);
  auto a = std::make_shared<NodeCheckArgs>();
  auto* cmd = group->add_subcommand(
      "check",
      "Check every prerequisite for running spaces here, with the fix for each; exit 0 when the "
      "node is ready (it offers the kvm runtime), 1 when not");
  cmd->add_flag("--json", a->json, "Print the report as JSON (as GET /api/v1/nodes does)");
  cmd->add_option("--output,-o", a->output, "Output format")
      ->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--uri", a->uri, "libvirt URI")->capture_default_str();
  cmd->add_option("--domain-type", a->domain_type,
                  "auto (kvm when a KVM guest really runs here, else qemu), kvm (hardware "
                  "virtualisation) or qemu (software emulation)")
      ->check(CLI::IsMember({"auto", "kvm", "qemu"}))
      ->capture_default_str();
  cmd->add_option("--guest-filter", a->guest_filter,
                  "What filters guests (server.kvm.guest_filter): auto (bowline's guard on this "
                  "host's libvirt, else libvirt's nwfilter), guard or nwfilter")
      ->check(CLI::IsMember({"auto", "guard", "nwfilter"}))
      ->capture_default_str();
  cmd->add_option("--images-path", a->images_path,
                  "Where bowline keeps images and disks (server.kvm.images_path)")
      ->type_name("PATH")
      ->capture_default_str();
  cmd->add_option("--cloud-image-path", a->cloud_image_path,
                  "The cloud-image library (server.kvm.cloud_image_path; default "
                  "IMAGES_PATH/cloud-images)")
      ->type_name("PATH");
  cmd->add_option("--base-image-path", a->base_image_path,
                  "The cache of downloaded images (server.kvm.base_image_path; default "
                  "IMAGES_PATH/base)")
      ->type_name("PATH");
  cmd->add_option("--template", a->templates,
                  "Template files whose bridges, networks and devices this node must have "
                  "(repeatable)")
      ->type_name("FILE");
  cmd->callback([a, &exit_code] {
    try {
      exit_code = node_check(*a);
    } catch (const std::exception& e) {
      std::cerr << "bowline: " << e.what() << "\n";
      exit_code = kExitInvalid;
    }
  });
}

}  // namespace bowline::cli
