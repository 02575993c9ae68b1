// Cozystack's VM parameters: instance type and preference, resources, firmware, cpuModel,
// gpus, disks, networks, sshKeys, cloud-init, run strategy, external access; and the
// template switches display and console.
#include <algorithm>
#include <set>

#include "catalog/catalog.hpp"
#include "spec/builder.hpp"
#include "spec/quantity.hpp"
#include "spec/validators.hpp"
#include "util/duration.hpp"
#include "util/strings.hpp"

namespace bowline::spec {
namespace {

constexpr std::uint64_t kUint32Max = 4294967295ull;
constexpr std::uint64_t kMinQuantityMemory = 1000000;  // 1M: KubeVirt refuses less
// Shorter would suspend a guest between two keystrokes of someone reading its console.
constexpr std::chrono::seconds kShortestIdle{10};

template <typename Item, typename Span>
std::vector<std::string_view> names_of(const Span& span) {
  std::vector<std::string_view> names;
  for (const Item& item : span) names.push_back(item.name);
  return names;
}

}  // namespace

void SpecBuilder::read_instance_type(const YAML::Node& root) {
  if (auto type = string_field(root["instanceType"], "instanceType")) {
    if (!type->empty()) {
      if (!catalog::find_instance_type(*type)) {
        const auto hint =
            util::nearest(*type, names_of<catalog::InstanceType>(catalog::instance_types()));
        r_.error(root["instanceType"], "instanceType",
                 "unknown instance type \"" + *type + "\"" +
                     (hint.empty() ? " (see bowline catalog instancetypes)"
                                   : " (did you mean " + hint + "?)"));
      }
      spec_.instance_type = *type;
    }
  }
  if (auto profile = string_field(root["instanceProfile"], "instanceProfile")) {
    if (!profile->empty()) {
      if (!catalog::find_preference(*profile)) {
        const auto hint =
            util::nearest(*profile, names_of<catalog::Preference>(catalog::preferences()));
        r_.error(root["instanceProfile"], "instanceProfile",
                 "unknown preference \"" + *profile + "\"" +
                     (hint.empty() ? " (see bowline catalog preferences)"
                                   : " (did you mean " + hint + "?)"));
      }
      spec_.instance_profile = *profile;
    }
  }
  if (Reader::blank(root["cpuModel"])) return;  // the hypervisor's default model
  if (auto model = string_field(root["cpuModel"], "cpuModel")) {
    if (auto problem = check_cpu_model(*model); !problem.empty())
      r_.error(root["cpuModel"], "cpuModel", problem);
    spec_.cpu_model = *model;
  }
}

void SpecBuilder::read_resources(const YAML::Node& node) {
  if (Reader::absent(node) || !r_.mapping(node, "resources", {"cpu", "sockets", "memory"})) return;
  auto count = [&](const char* key) -> std::optional<std::uint32_t> {
    const auto path = field_path("resources", key);
    if (Reader::blank(node[key])) return std::nullopt;  // "": not sized here
    bool is_unknown = false;
    auto text = r_.string(node[key], path, &is_unknown);
    if (is_unknown) unknown_.insert(path);
    if (!text) return std::nullopt;
    auto parsed = parse_whole_number(*text, kUint32Max);
    if (!parsed.ok()) {
      r_.error(node[key], path,
               parsed.error() + " (it becomes the VM's unsigned " +
                   (std::string(key) == "cpu" ? "cores" : "sockets") + " count)");
      return std::nullopt;
    }
    return static_cast<std::uint32_t>(parsed.value());
  };
  spec_.resources.cpu = count("cpu");
  spec_.resources.sockets = count("sockets");
  if (Reader::blank(node["memory"])) return;
  if (auto text = string_field(node["memory"], "resources.memory")) {
    auto parsed = parse_memory_quantity(*text);
    if (!parsed.ok()) {
      r_.error(node["memory"], "resources.memory", parsed.error());
    } else if (parsed.value() < kMinQuantityMemory) {
      r_.error(node["memory"], "resources.memory",
               "\"" + *text + "\" is below 1M: KubeVirt refuses less, and no guest boots in it");
    } else {
      spec_.resources.memory_bytes = parsed.value();
      spec_.resources.memory_text = *text;
    }
  }
}

void SpecBuilder::read_firmware(const YAML::Node& node) {
  if (Reader::absent(node) ||
      !r_.mapping(node, "firmware", {"bootloader", "secureBoot", "efiPersistent"}))
    return;
  if (!Reader::blank(node["bootloader"])) {  // "": the preference's (instanceProfile's) own
    if (auto loader = r_.choice(node["bootloader"], "firmware.bootloader", {"uefi", "bios"}))
      spec_.firmware.bootloader = *loader == "uefi" ? Bootloader::Uefi : Bootloader::Bios;
  }
  if (auto v = r_.boolean(node["secureBoot"], "firmware.secureBoot"))
    spec_.firmware.secure_boot = *v;
  if (auto v = r_.boolean(node["efiPersistent"], "firmware.efiPersistent"))
    spec_.firmware.efi_persistent = *v;
}

void SpecBuilder::read_named_lists(const YAML::Node& root) {
  // Each entry of gpus, disks, networks and subnets is a mapping with a name.
  auto each = [&](const char* key, const std::vector<std::string_view>& fields, auto&& on_entry) {
    const YAML::Node list = root[key];
    if (Reader::absent(list) || !r_.sequence(list, key)) return;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto path = index_path(key, i);
      if (!r_.mapping(list[i], path, fields)) continue;
      auto name = r_.string(list[i]["name"], field_path(path, "name"));
      if (!name) {
        if (Reader::absent(list[i]["name"]))
          r_.error(list[i], field_path(path, "name"), "name must be set");
        continue;
      }
      if (!seen.insert(*name).second) {
        r_.error(list[i]["name"], field_path(path, "name"), "\"" + *name + "\" is listed twice");
        continue;
      }
      on_entry(list[i], path, *name);
    }
  };

  each("gpus", {"name"},
       [&](const YAML::Node& entry, const std::string& path, const std::string& name) {
         // A device-plugin resource (nvidia.com/GA102GL_A10) for KubeVirt, or a PCI address on
         // libvirt.
         if (name.find_first_of(" \t\n\"'<>&") != std::string::npos)
           r_.error(entry["name"], field_path(path, "name"),
                    "\"" + name + "\" is not a GPU resource name");
         else
           spec_.gpus.push_back(name);
       });
  each("disks", {"name", "bus"},
       [&](const YAML::Node& entry, const std::string& path, const std::string& name) {
         NamedDisk disk{name, std::nullopt};
         if (auto problem = check_dns_label(name); !problem.empty()) {
           r_.error(entry["name"], field_path(path, "name"), problem);
           return;
         }
         if (!Reader::blank(entry["bus"]))  // "": the preference's bus
           disk.bus =
               r_.choice(entry["bus"], field_path(path, "bus"), {"virtio", "sata", "scsi", "usb"});
         spec_.disks.push_back(std::move(disk));
       });
  std::vector<std::string> networks, subnets;
  auto network_entry = [&](std::vector<std::string>& into) {
    return [&](const YAML::Node& entry, const std::string& path, const std::string& name) {
      if (auto problem = check_dns_label(name); !problem.empty())
        r_.error(entry["name"], field_path(path, "name"), problem);
      else
        into.push_back(name);
    };
  };
  each("networks", {"name"}, network_entry(networks));
  each("subnets", {"name"}, network_entry(subnets));
  if (!Reader::absent(root["subnets"])) {
    if (!Reader::absent(root["networks"]))
      r_.warning(root["subnets"], "subnets", "deprecated and ignored because networks is set");
    else
      r_.warning(root["subnets"], "subnets", "deprecated: rename it to networks");
  }
  spec_.networks = networks.empty() ? subnets : networks;
}

void SpecBuilder::read_cloud_init(const YAML::Node& root) {
  const YAML::Node keys = root["sshKeys"];
  if (!Reader::absent(keys) && r_.sequence(keys, "sshKeys")) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const auto path = index_path("sshKeys", i);
      auto key = r_.string(keys[i], path);
      if (!key) continue;
      if (auto problem = check_ssh_public_key(*key); !problem.empty())
        r_.error(keys[i], path, problem);
      else
        spec_.ssh_keys.push_back(util::trim(*key));
    }
  }

  if (auto v = r_.boolean(root["netplanDhcp"], "netplanDhcp")) spec_.netplan_dhcp = *v;
  if (!Reader::blank(root["cloudInitSeed"]))  // "": the VM's own UUID
    if (auto seed = string_field(root["cloudInitSeed"], "cloudInitSeed"))
      spec_.cloud_init_seed = *seed;

  const YAML::Node cloud_init = root["cloudInit"];
  if (Reader::blank(cloud_init)) return;  // "": none (no cloud-init disk of the template's)
  bool cloud_init_unknown = false;
  auto text = r_.scalar(cloud_init, "cloudInit", false, &cloud_init_unknown, Into::Document);
  // Without values, a templated cloudInit is still checked as YAML in its raw form.
  if (cloud_init_unknown) text = Scalar{cloud_init.Scalar(), true, cloud_init};
  if (text) {
    if (text->text.starts_with("#cloud-config")) {
      try {
        const auto parsed = YAML::Load(text->text);
        // cloud-init reads one document; and a stray ',' makes yaml-cpp drop the rest (or, in
        // LoadAll, loop forever).
        const auto trailing = after_first_document(text->text);
        if (trailing.kind == Trailing::Stray)
          r_.error(
              cloud_init, "cloudInit",
              "#cloud-config is not valid YAML at its line " +
                  std::to_string(trailing.mark.line + 1) + ": unexpected '" +
                  text->text.substr(
                      std::min(static_cast<std::size_t>(trailing.mark.pos), text->text.size()), 1) +
                  "'");
        else if (trailing.kind == Trailing::Document)
          r_.error(cloud_init, "cloudInit",
                   "#cloud-config holds a second YAML document (after ---) at its line " +
                       std::to_string(trailing.mark.line + 1) + "; cloud-init reads only one");
        else if (!parsed.IsNull() && !parsed.IsMap())
          r_.error(cloud_init, "cloudInit", "#cloud-config must be a YAML mapping");
      } catch (const YAML::Exception& e) {
        // Lines inside a literal block scalar start on the line after its `|` indicator; in
        // any other form (quoted, folded, or changed by expansion) they do not map to the file.
        const auto at = r_.document().position(cloud_init);
        const auto pos = cloud_init.Mark().pos;
        const bool literal_block = pos >= 0 &&
                                   static_cast<std::size_t>(pos) < r_.document().text().size() &&
                                   r_.document().text()[static_cast<std::size_t>(pos)] == '|' &&
                                   text->text == cloud_init.Scalar();
        r_.error(
            cloud_init, "cloudInit",
            "#cloud-config is not valid YAML at its line " + std::to_string(e.mark.line + 1) +
                (literal_block ? " (file line " + std::to_string(at.line + e.mark.line + 1) + ")"
                               : std::string()) +
                ": " + e.msg);
      }
    } else if (!text->text.empty() && !text->text.starts_with("#!") &&
               !text->text.starts_with("Content-Type:") &&
               !text->text.starts_with("MIME-Version:")) {
      r_.warning(cloud_init, "cloudInit",
                 "neither #cloud-config, a #! script nor MIME: cloud-init will ignore it");
    }
    spec_.cloud_init = text->text;
  }
}

void SpecBuilder::read_access(const YAML::Node& root) {
  if (auto d = string_field(root["description"], "description")) spec_.description = *d;
  if (auto s = r_.choice(root["runStrategy"], "runStrategy",
                         {"Always", "Halted", "Manual", "RerunOnFailure", "Once"})) {
    static const std::pair<std::string_view, RunStrategy> kMap[] = {
        {"Always", RunStrategy::Always},
        {"Halted", RunStrategy::Halted},
        {"Manual", RunStrategy::Manual},
        {"RerunOnFailure", RunStrategy::RerunOnFailure},
        {"Once", RunStrategy::Once}};
    for (auto [name, value] : kMap)
      if (name == *s) spec_.run_strategy = value;
  }
  if (auto text = string_field(root["idleSuspend"], "idleSuspend")) {
    if (*text == "off" || *text == "never")
      spec_.idle_suspend = std::chrono::seconds(0);
    else if (const auto after = util::parse_duration(*text); after && *after >= kShortestIdle)
      spec_.idle_suspend = *after;
    else
      r_.error(root["idleSuspend"], "idleSuspend",
               "\"" + *text + "\" is not a duration of 10s or more (like 30m or 2h) or off");
  }
  if (auto v = r_.boolean(root["external"], "external")) spec_.external = *v;
  if (auto m = r_.choice(root["externalMethod"], "externalMethod", {"PortList", "WholeIP"}))
    spec_.external_method = *m == "WholeIP" ? ExternalMethod::WholeIP : ExternalMethod::PortList;
  const YAML::Node ports = root["externalPorts"];
  if (!Reader::absent(ports) && r_.sequence(ports, "externalPorts")) {
    spec_.external_ports.clear();
    for (std::size_t i = 0; i < ports.size(); ++i) {
      const auto path = index_path("externalPorts", i);
      auto port = r_.whole_number(ports[i], path, 65535);
      if (!port) continue;
      bool duplicate = false;
      for (auto p : spec_.external_ports) duplicate = duplicate || p == *port;
      if (duplicate)
        r_.error(ports[i], path, "port " + std::to_string(*port) + " is listed twice");
      else
        spec_.external_ports.push_back(static_cast<std::uint16_t>(*port));
    }
  }
  if (auto v = r_.boolean(root["externalAllowICMP"], "externalAllowICMP"))
    spec_.external_allow_icmp = *v;
  if (auto v = r_.boolean(root["display"], "display")) spec_.display = *v;
  if (auto v = r_.boolean(root["console"], "console")) spec_.console = *v;
  read_ports(root["ports"]);
}

// `ports: [8000, {port: 3000, name: web}]`: what the tunnel may reach besides SSH.
void SpecBuilder::read_ports(const YAML::Node& ports) {
  if (Reader::absent(ports) || !r_.sequence(ports, "ports")) return;
  for (std::size_t i = 0; i < ports.size(); ++i) {
    const auto path = index_path("ports", i);
    ServicePort entry;
    const bool named = ports[i].IsMap();
    // yaml-cpp's Node assignment writes into the node: pick the port's node once.
    const YAML::Node number = named ? ports[i]["port"] : ports[i];
    if (named) {
      if (!r_.mapping(ports[i], path, {"port", "name", "http", "preview"})) continue;
      if (Reader::absent(number)) {
        r_.error(ports[i], path, "a port entry needs port: (e.g. {port: 3000, name: web})");
        continue;
      }
      if (auto name = string_field(ports[i]["name"], path + ".name")) {
        if (auto problem = check_dns_label(*name); !problem.empty()) {
          r_.error(ports[i]["name"], path + ".name", problem);
          continue;
        }
        entry.name = *name;
      }
      read_preview(ports[i], path, entry);
    }
    const auto port = r_.whole_number(number, named ? path + ".port" : path, 65535);
    if (!port) continue;
    entry.port = static_cast<std::uint16_t>(*port);
    bool duplicate = false;
    for (const auto& p : spec_.ports) duplicate = duplicate || p.port == entry.port;
    if (duplicate)
      r_.error(number, path, "port " + std::to_string(*port) + " is listed twice");
    else
      spec_.ports.push_back(entry);
  }
}

// `http: true` marks a web app (a private preview); `preview: private|team` says who may open
// it. Both given must agree: `http: false` with a preview is a contradiction, not a default.
void SpecBuilder::read_preview(const YAML::Node& entry, const std::string& path,
                               ServicePort& port) {
  const auto http = r_.boolean(entry["http"], path + ".http");
  if (http && *http) port.preview = Preview::Private;
  const auto who = r_.choice(entry["preview"], path + ".preview", {"private", "team"});
  if (!who) return;
  if (http && !*http) {
    r_.error(entry["http"], path + ".http",
             "http: false contradicts preview: " + *who + " (a preview is for a web app)");
    return;
  }
  port.preview = *who == "team" ? Preview::Team : Preview::Private;
}

}  // namespace bowline::spec
