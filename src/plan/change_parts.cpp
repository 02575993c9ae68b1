#include "plan/change_parts.hpp"

#include <nlohmann/json.hpp>

#include "util/hash.hpp"

namespace bowline::plan {

const char* to_string(Applies applies) {
  return applies == Applies::NewSpaces ? "to new spaces only" : "at the next start";
}

const std::vector<PartRule>& part_rules() {
  static const std::vector<PartRule> rules{
      {"size", Applies::NextStart, "memory, vCPUs and CPU model"},
      {"firmware", Applies::NextStart, "bootloader, Secure Boot, NVRAM"},
      {"devices", Applies::NextStart, "passthrough devices, GPUs and extra disks"},
      {"display", Applies::NextStart, "the VNC display"},
      {"networks", Applies::NextStart, "network interfaces"},
      {"address", Applies::NextStart, "address, gateway and resolvers"},
      {"disk", Applies::NextStart, "disk size (grown, never shrunk)"},
      {"hostname", Applies::NextStart, "host name"},
      {"account", Applies::NextStart, "the owner's account, keys, password and time zone"},
      {"environment", Applies::NextStart, "environment variables"},
      {"runStrategy", Applies::NextStart, "run strategy"},
      {"external", Applies::NextStart, "external access and its ports"},
      // cloud-init runs a template's cloud-config once per instance (its bootcmd at every boot),
      // and a space keeps its instance for life.
      {"cloudInit", Applies::NextStart,
       "the template's cloudInit (run as a new cloud-init instance; host keys and machine-id "
       "stay)"},
      {"image", Applies::NewSpaces, "the base image"},
  };
  return rules;
}

namespace {

using Json = nlohmann::ordered_json;

std::string fingerprint(const Json& value) {
  return util::sha256_hex(value.dump()).substr(0, 16);
}

Json disk_json(const Disk& d) {
  return Json::array({d.path, d.bus, d.target});
}

}  // namespace

std::map<std::string, std::string> change_parts(const spec::Spec& spec, const Plan& p) {
  const auto& g = p.guest;
  std::map<std::string, std::string> parts;
  parts["size"] = fingerprint({p.memory_bytes, p.sockets, p.cores, p.cpu_model.value_or("")});
  parts["firmware"] =
      fingerprint({spec::to_string(p.firmware.bootloader), p.firmware.secure_boot, p.firmware.smm,
                   p.firmware.loader, p.firmware.reset_nvram_on_start});
  Json devices = Json::array();
  for (const auto& d : p.host_devices) devices.push_back(d.text);
  for (const auto& d : p.data_disks) devices.push_back(disk_json(d));
  devices.push_back(disk_json(p.system_disk));
  parts["devices"] = fingerprint(devices);
  parts["display"] = fingerprint(p.display);
  Json nics = Json::array();
  for (const auto& n : p.nics)
    nics.push_back({n.type == NicType::Bridge ? "bridge" : "network", n.source, n.model});
  parts["networks"] = fingerprint(nics);
  parts["address"] =
      fingerprint({g.address ? g.address->to_string() : "", g.network ? g.network->to_string() : "",
                   g.gateway ? g.gateway->to_string() : "", g.resolvers, g.dhcp_everywhere});
  parts["disk"] = fingerprint(spec.disk_bytes ? Json(*spec.disk_bytes) : Json(nullptr));
  parts["hostname"] = fingerprint(g.hostname);
  parts["account"] =
      fingerprint({g.username, g.ssh_keys, g.password_hash.value_or(""), g.timezone});
  Json environment = Json::array();
  for (const auto& e : g.environment) environment.push_back({e.name, e.value});
  parts["environment"] = fingerprint(environment);
  parts["runStrategy"] = fingerprint(spec::to_string(p.run_strategy));
  parts["external"] =
      fingerprint({spec.external, spec::to_string(spec.external_method), spec.external_ports});
  parts["cloudInit"] = fingerprint(g.user_cloud_init.value_or(""));
  parts["image"] = fingerprint(
      {spec::to_string(spec.image.kind), spec.image.reference, spec.image.sha256.value_or("")});
  return parts;
}

std::vector<PendingChange> pending_changes(const std::map<std::string, std::string>& applied,
                                           const std::map<std::string, std::string>& now) {
  std::vector<PendingChange> out;
  for (const auto& rule : part_rules()) {
    const auto was = applied.find(rule.name);
    const auto is = now.find(rule.name);
    if (was == applied.end() || is == now.end() || was->second == is->second) continue;
    out.push_back({rule.name, rule.applies, rule.what});
  }
  return out;
}

}  // namespace bowline::plan
