// bowline kubevirt apply|delete: a template's manifests onto a cluster with server-side apply,
// or off it again; and the rendering behind `template render --output kubevirt`.
#include "cli/kubevirt_verbs.hpp"

#include <iostream>
#include <optional>

#include "cli/app.hpp"
#include "cli/template_input.hpp"
#include "cli/verbs.hpp"
#include "kubevirt/apply.hpp"
#include "kubevirt/curl_client.hpp"
#include "kubevirt/kubeconfig.hpp"
#include "kubevirt/render.hpp"
#include "kubevirt/yaml_stream.hpp"
#include "plan/guest_plan.hpp"

namespace bowline::cli {
namespace {

std::string value_of(const spec::Variables& values, const char* name) {
  const auto it = values.find(name);
  return it == values.end() ? std::string() : it->second;
}

kubevirt::RenderOptions options_from(const spec::Variables& values, const std::string& ns) {
  kubevirt::RenderOptions o;
  o.ns = ns;
  o.owner.username = value_of(values, "user.username");
  o.owner.email = value_of(values, "user.email");
  o.owner.timezone = value_of(values, "user.timezone");
  o.space_name = value_of(values, "space.name");
  o.space_id = value_of(values, "space.id");
  if (values.contains("user.service_password"))
    o.owner.service_password_hash =
        plan::password_hash(value_of(values, "user.service_password"),
                            o.space_id.empty() ? ns + "/" + o.space_name : o.space_id);
  return o;
}

// The manifests of `file`, or the exit code that says why there are none.
struct Rendered {
  std::optional<kubevirt::Manifests> manifests;
  int exit_code = kExitOk;
};

Rendered render(const std::string& file, const std::vector<std::string>& vars,
                const std::string& ns) {
  const auto values = parse_vars(vars);
  auto loaded = load_template(file, &values);
  if (!loaded) return {std::nullopt, loaded.exit_code};
  try {
    auto manifests = kubevirt::render_manifests(*loaded.spec, options_from(values, ns));
    for (const auto& note : manifests.notes) std::cerr << file << ": note: " << note << "\n";
    return {std::move(manifests), kExitOk};
  } catch (const kubevirt::RenderError& e) {
    for (const auto& problem : e.problems()) std::cerr << file << ": error: " << problem << "\n";
    return {std::nullopt, kExitInvalid};
  }
}

struct ClusterArgs {
  std::string file;
  std::vector<std::string> vars;
  std::string ns;
  std::string kubeconfig;
  std::string context;
  bool keep_disk = false;
};

int on_cluster(const ClusterArgs& args, bool apply) {
  auto rendered = render(args.file, args.vars, args.ns);
  if (!rendered.manifests) return rendered.exit_code;
  auto objects = rendered.manifests->objects;
  if (!apply && args.keep_disk)
    std::erase_if(objects, [](const auto& o) { return o["kind"] == "DataVolume"; });

  std::optional<kubevirt::Connection> connection;
  const auto path = args.kubeconfig.empty() ? kubevirt::default_kubeconfig_path() : args.kubeconfig;
  try {
    connection = kubevirt::load_kubeconfig(path, args.context);
  } catch (const kubevirt::KubeconfigError& e) {
    std::cerr << "bowline: " << e.what() << "\n";
    return kExitUsage;
  }
  kubevirt::CurlKubeClient client(*connection);
  try {
    const auto lines = apply ? kubevirt::apply_objects(client, objects)
                             : kubevirt::delete_objects(client, objects);
    for (const auto& line : lines) std::cout << line << "\n";
    return kExitOk;
  } catch (const kubevirt::ApiError& e) {
    std::cerr << "bowline: " << e.what() << "\n";
  } catch (const kubevirt::TransportError& e) {
    std::cerr << "bowline: " << e.what() << "\n";
  }
  return kExitCluster;
}

void add_cluster_verb(CLI::App& group, int& exit_code, bool apply) {
  auto* cmd = group.add_subcommand(
      apply ? "apply" : "delete",
      apply ? "Render FILE and server-side apply its objects (field manager bowline)"
            : "Render FILE and delete its objects from the cluster");
  auto args = std::make_shared<ClusterArgs>();
  cmd->add_option("FILE", args->file, "Template file")->required();
  cmd->add_option("--namespace,-n", args->ns, "Kubernetes namespace")->required();
  cmd->add_option("--kubeconfig", args->kubeconfig,
                  "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)");
  cmd->add_option("--context", args->context, "kubeconfig context (default: current-context)");
  cmd->add_option("--var", args->vars, "A variable's value, e.g. user.username=alice (repeatable)");
  if (!apply)
    cmd->add_flag("--keep-disk", args->keep_disk,
                  "Keep the system disk's DataVolume (and so its data)");
  cmd->callback([args, &exit_code, apply] { exit_code = on_cluster(*args, apply); });
}

}  // namespace

int render_kubevirt(const std::string& file, const std::vector<std::string>& vars,
                    const std::string& ns) {
  const auto rendered = render(file, vars, ns);
  if (!rendered.manifests) return rendered.exit_code;
  std::cout << kubevirt::to_yaml_stream(rendered.manifests->objects);
  return kExitOk;
}

void add_kubevirt_verbs(CLI::App& app, int& exit_code) {
  auto* group = app.add_subcommand("kubevirt", "Run spaces as KubeVirt VirtualMachines");
  group->require_subcommand(1);
  add_cluster_verb(*group, exit_code, true);
  add_cluster_verb(*group, exit_code, false);
}

}  // namespace bowline::cli
