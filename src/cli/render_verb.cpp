// bowline template render: everything a hypervisor needs for one space, shown offline.
// Facts a server would choose (space id, UUID, VNC password) are derived from the inputs
// here, so rendering twice gives byte-identical output.
#include <fstream>
#include <iostream>

#include "cli/app.hpp"
#include "cli/kubevirt_verbs.hpp"
#include "cli/output.hpp"
#include "cli/template_input.hpp"
#include "cli/verbs.hpp"
#include "guest/cloud_init.hpp"
#include "libvirt/domain_xml.hpp"
#include "libvirt/nwfilter.hpp"
#include "plan/plan.hpp"
#include "spec/spec_json.hpp"
#include "util/hash.hpp"

namespace bowline::cli {
namespace {

struct RenderArgs {
  std::string file;
  std::vector<std::string> vars;
  std::vector<std::string> ssh_keys;
  std::string output = "spec";
  std::string seed_iso;
  std::string domain_type = "kvm";
  std::string images_path = "/var/lib/libvirt/images/bowline";
  std::vector<std::string> resolvers;
  std::string kube_namespace = "default";
};

std::string value_or(const spec::Variables& vars, const std::string& key,
                     std::string fallback = "") {
  const auto it = vars.find(key);
  return it == vars.end() ? fallback : it->second;
}

std::string uuid_from_hash(const std::string& hex) {
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-4" + hex.substr(13, 3) + "-a" +
         hex.substr(17, 3) + "-" + hex.substr(20, 12);
}

int render(const RenderArgs& args) {
  const auto values = parse_vars(args.vars);
  if (args.output == "kubevirt") return render_kubevirt(args.file, args.vars, args.kube_namespace);
  const auto loaded = load_template(args.file, &values);
  if (!loaded) return loaded.exit_code;
  const auto& spec = *loaded.spec;

  plan::Owner user;
  user.username = value_or(values, "user.username");
  user.email = value_or(values, "user.email");
  user.timezone = value_or(values, "user.timezone");
  user.id = value_or(values, "user.id");
  user.ssh_keys = args.ssh_keys;

  plan::SpaceFacts space;
  space.name = value_or(values, "space.name");
  space.id = value_or(values, "space.id",
                      "space-" + util::sha256_hex(user.username + "/" + space.name).substr(0, 16));
  space.uuid = value_or(values, "space.uuid", uuid_from_hash(util::sha256_hex("uuid/" + space.id)));
  if (values.count("user.service_password"))
    user.service_password_hash = plan::password_hash(values.at("user.service_password"), space.id);
  space.vnc_password = util::sha256_hex("vnc/" + space.id).substr(0, 8);
  space.template_name = value_or(values, "template.name");
  space.template_id = value_or(values, "template.id");
  if (values.count("space.ip_address") && !values.at("space.ip_address").empty()) {
    space.ip = spec::Ipv4Address::parse(values.at("space.ip_address"));
    if (!space.ip) {
      std::cerr << "bowline: --var space.ip_address: not an IPv4 address\n";
      return kExitUsage;
    }
  }

  plan::NodeSettings node;
  node.domain_type = args.domain_type == "qemu" ? plan::DomainType::Qemu : plan::DomainType::Kvm;
  node.images_path = args.images_path;
  if (!args.resolvers.empty()) node.resolvers = args.resolvers;
  node.server_url = value_or(values, "server.url");

  plan::Plan plan;
  try {
    plan = plan::make_plan(spec, user, space, node);
  } catch (const std::invalid_argument& e) {
    std::cerr << args.file << ": error: " << e.what() << "\n";
    return kExitInvalid;
  }

  if (!args.seed_iso.empty()) {
    std::ofstream out(args.seed_iso, std::ios::binary | std::ios::trunc);
    const auto iso = guest::seed_iso(plan.guest);
    out.write(iso.data(), static_cast<std::streamsize>(iso.size()));
    if (!out) {
      std::cerr << "bowline: cannot write " << args.seed_iso << "\n";
      return kExitUsage;
    }
  }

  if (args.output == "spec") {
    std::cout << to_yaml(spec::to_json(spec));
  } else if (args.output == "domain-xml") {
    std::cout << libvirt::render_domain_xml(plan, libvirt::metadata_for(space, user));
  } else if (args.output == "nwfilter") {  // what the domain's NICs reference
    std::cout << libvirt::traffic_filter_xml();
  } else if (args.output == "user-data") {
    std::cout << guest::render_user_data(plan.guest);
  } else if (args.output == "meta-data") {
    std::cout << guest::render_meta_data(plan.guest);
  } else if (args.output == "network-config") {
    if (auto config = guest::render_network_config(plan.guest))
      std::cout << *config;
    else
      std::cerr << "(no network-config: cloud-init brings up the first NIC with DHCP)\n";
  }
  for (const auto& note : plan.notes) std::cerr << args.file << ": note: " << note << "\n";
  return kExitOk;
}

}  // namespace

void add_render_verb(CLI::App& template_group, int& exit_code) {
  auto args = std::make_shared<RenderArgs>();
  auto* cmd = template_group.add_subcommand("render",
                                            "Show what a space made from this template gets: spec, "
                                            "domain XML and its network filter, cloud-init "
                                            "seed, KubeVirt manifests");
  cmd->add_option("FILE", args->file, "Template file")->required();
  cmd->add_option(
      "--var", args->vars,
      "A value, e.g. user.username=alice, space.name=dev, space.ip_address=198.51.100.10, "
      "user.service_password=... (repeatable)");
  cmd->add_option("--ssh-key", args->ssh_keys, "The owner's SSH public key (repeatable)");
  cmd->add_option("--output,-o", args->output, "What to print")
      ->check(CLI::IsMember({"spec", "domain-xml", "nwfilter", "user-data", "meta-data",
                             "network-config", "kubevirt"}));
  cmd->add_option("--seed-iso", args->seed_iso, "Also write the cloud-init seed ISO here");
  cmd->add_option("--domain-type", args->domain_type, "libvirt domain type")
      ->check(CLI::IsMember({"kvm", "qemu"}));
  cmd->add_option("--images-path", args->images_path, "Where space directories live");
  cmd->add_option("--resolver", args->resolvers, "DNS server for bridged guests (repeatable)");
  cmd->add_option("--namespace", args->kube_namespace, "Kubernetes namespace (with -o kubevirt)");
  cmd->callback([args, &exit_code] { exit_code = render(*args); });
}

}  // namespace bowline::cli
