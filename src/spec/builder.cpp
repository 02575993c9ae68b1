#include "spec/builder.hpp"

#include "spec/loader.hpp"

namespace bowline::spec {

const std::vector<std::string_view> kTopLevelFields = {
    "name",       "hostname",       "image",         "imageChecksum",
    "memory",     "cpus",           "disk",          "environment",
    "devices",    "network",        "instanceType",  "instanceProfile",
    "resources",  "firmware",       "cpuModel",      "gpus",
    "disks",      "networks",       "subnets",       "sshKeys",
    "cloudInit",  "netplanDhcp",    "cloudInitSeed", "runStrategy",
    "external",   "externalMethod", "externalPorts", "externalAllowICMP",
    "display",    "console",        "ports",         "description",
    "idleSuspend"};

std::optional<std::string> SpecBuilder::string_field(const YAML::Node& node,
                                                     const std::string& path) {
  bool is_unknown = false;
  auto value = r_.string(node, path, &is_unknown);
  if (is_unknown) unknown_.insert(path);
  return value;
}

Spec SpecBuilder::build(const YAML::Node& root) {
  r_.mapping(root, "", kTopLevelFields);
  read_identity(root);
  read_image(root);
  read_knot_sizing(root);
  read_environment(root["environment"]);
  read_devices(root["devices"]);
  read_network(root["network"]);
  read_instance_type(root);
  read_resources(root["resources"]);
  read_firmware(root["firmware"]);
  read_named_lists(root);
  read_cloud_init(root);
  read_access(root);
  resolve(root);
  return std::move(spec_);
}

LoadResult load_spec(std::string text, const Variables* values) {
  LoadResult result;
  Document document(std::move(text), result.diagnostics);
  if (!document.ok()) return result;
  Reader reader(document, values, result.diagnostics);
  SpecBuilder builder(reader);
  Spec spec = builder.build(document.root());
  if (!result.diagnostics.has_errors()) result.spec = std::move(spec);
  return result;
}

}  // namespace bowline::spec
