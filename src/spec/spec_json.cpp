#include "spec/spec_json.hpp"

namespace bowline::spec {

nlohmann::ordered_json to_json(const Spec& s) {
  using json = nlohmann::ordered_json;
  json out;
  out["name"] = s.name;
  out["hostname"] = s.hostname;
  out["image"] = {{"kind", to_string(s.image.kind)}, {"reference", s.image.reference}};
  if (s.image.sha256) out["image"]["sha256"] = *s.image.sha256;
  out["sizing"] = {{"source", to_string(s.sizing.source)},
                   {"memoryBytes", s.sizing.memory_bytes},
                   {"sockets", s.sizing.sockets},
                   {"cores", s.sizing.cores},
                   {"vcpus", s.sizing.vcpus()}};
  out["diskBytes"] = s.disk_bytes ? json(*s.disk_bytes) : json(nullptr);
  json env = json::array();
  for (const auto& e : s.environment) env.push_back({{"name", e.name}, {"value", e.value}});
  out["environment"] = env;
  json devices = json::array();
  for (const auto& d : s.devices)
    devices.push_back({{"kind", to_string(d.kind())}, {"id", d.text}});
  out["devices"] = devices;
  json net = {{"mode", to_string(s.network.mode)}, {"bridge", s.network.bridge}};
  if (s.network.cidr) net["cidr"] = s.network.cidr->to_string();
  if (s.network.range_start) net["ipRangeStart"] = s.network.range_start->to_string();
  if (s.network.range_end) net["ipRangeEnd"] = s.network.range_end->to_string();
  if (s.network.gateway) net["gateway"] = s.network.gateway->to_string();
  out["network"] = net;
  out["instanceType"] = s.instance_type ? json(*s.instance_type) : json(nullptr);
  out["instanceProfile"] = s.instance_profile ? json(*s.instance_profile) : json(nullptr);
  json firmware = {{"bootloader", s.firmware.bootloader ? json(to_string(*s.firmware.bootloader))
                                                        : json(nullptr)},
                   {"secureBoot", s.firmware.secure_boot},
                   {"efiPersistent", s.firmware.efi_persistent}};
  out["firmware"] = firmware;
  out["cpuModel"] = s.cpu_model ? json(*s.cpu_model) : json(nullptr);
  json gpus = json::array();
  for (const auto& g : s.gpus) gpus.push_back({{"name", g}});
  out["gpus"] = gpus;
  json disks = json::array();
  for (const auto& d : s.disks) {
    json disk = {{"name", d.name}};
    if (d.bus) disk["bus"] = *d.bus;
    disks.push_back(disk);
  }
  out["disks"] = disks;
  json networks = json::array();
  for (const auto& n : s.networks) networks.push_back({{"name", n}});
  out["networks"] = networks;
  out["sshKeys"] = s.ssh_keys;
  out["cloudInit"] = s.cloud_init ? json(*s.cloud_init) : json(nullptr);
  out["netplanDhcp"] = s.netplan_dhcp;
  out["cloudInitSeed"] = s.cloud_init_seed ? json(*s.cloud_init_seed) : json(nullptr);
  out["runStrategy"] = to_string(s.run_strategy);
  // Seconds; 0: never; null: the server's default.
  out["idleSuspend"] = s.idle_suspend ? json(s.idle_suspend->count()) : json(nullptr);
  out["external"] = s.external;
  out["externalMethod"] = to_string(s.external_method);
  out["externalPorts"] = s.external_ports;
  out["externalAllowICMP"] = s.external_allow_icmp;
  out["display"] = s.display;
  out["console"] = s.console;
  json ports = json::array();
  for (const auto& p : s.ports) {
    json entry = {{"port", p.port}};
    if (!p.name.empty()) entry["name"] = p.name;
    if (p.preview != Preview::None) entry["preview"] = to_string(p.preview);
    ports.push_back(entry);
  }
  out["ports"] = ports;
  out["origins"] = s.origins;
  return out;
}

}  // namespace bowline::spec
