// server.nodes: each entry is YAML (a mapping in the file, flow text in a flag or the
// environment), checked here into a NodeSetting.
#include "server/node_settings.hpp"

#include <yaml-cpp/yaml.h>

#include <set>

#include "server/settings_value.hpp"
#include "spec/quantity.hpp"

namespace bowline::server {

namespace {

bool is_label(const std::string& text) {
  if (text.empty() || text.size() > 63 || text.front() == '-' || text.back() == '-') return false;
  for (char c : text)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

std::vector<std::string> words(const SettingValue& v, const YAML::Node& node,
                               const std::string& field) {
  std::vector<std::string> out;
  if (!node) return out;
  if (node.IsScalar()) return {node.as<std::string>()};
  if (!node.IsSequence()) throw v.error(field + ": expected a list of names");
  for (const auto& item : node) {
    if (!item.IsScalar()) throw v.error(field + ": expected a list of names");
    out.push_back(item.as<std::string>());
  }
  return out;
}

const std::set<std::string>& known_fields() {
  static const std::set<std::string> fields{"name",    "kind",         "uri",     "images_path",
                                            "pool",    "networks",     "bridges", "labels",
                                            "reserve", "ssh_host_key", "ssh_key"};
  return fields;
}

void read_reserve(const SettingValue& v, const YAML::Node& node, NodeSetting& n) {
  if (!node) return;
  if (!node.IsMap()) throw v.error(n.name + ": reserve: expected memory: and cpus:");
  for (const auto& entry : node) {
    const auto key = entry.first.as<std::string>();
    const auto text = entry.second.as<std::string>();
    if (key == "memory") {
      const auto size = spec::parse_size(text);
      if (!size.ok()) throw v.error(n.name + ": reserve: memory: " + size.error());
      n.reserve_memory = size.value();
    } else if (key == "cpus") {
      const auto count = spec::parse_whole_number(text, 4096);
      if (!count.ok()) throw v.error(n.name + ": reserve: cpus: " + count.error());
      n.reserve_cpus = static_cast<unsigned>(count.value());
    } else {
      throw v.error(n.name + ": reserve: unknown field " + key + " (memory, cpus)");
    }
  }
}

NodeSetting node_of(const SettingValue& v, const YAML::Node& map) {
  if (!map.IsMap()) throw v.error("each node is a mapping with name: and uri:");
  for (const auto& entry : map)
    if (!known_fields().count(entry.first.as<std::string>()))
      throw v.error("unknown node field " + entry.first.as<std::string>() +
                    " (name, kind, uri, images_path, pool, networks, bridges, labels, reserve, "
                    "ssh_host_key, ssh_key)");
  NodeSetting n;
  n.name = map["name"] ? map["name"].as<std::string>() : "";
  if (!is_label(n.name))
    throw v.error("\"" + n.name + "\" is not a node name (lowercase letters, digits and '-')");
  if (n.name == "local")
    throw v.error("\"local\" is the node of server.libvirt_uri and server.kvm.images_path");
  if (map["kind"]) n.kind = map["kind"].as<std::string>();
  if (n.kind != "libvirt" && n.kind != "kubevirt")
    throw v.error(n.name + ": kind \"" + n.kind + "\" is none of libvirt and kubevirt");
  if (map["uri"]) n.uri = map["uri"].as<std::string>();
  if (n.kind == "libvirt" && n.uri.empty()) throw v.error(n.name + ": a libvirt node needs uri:");
  if (map["images_path"]) {
    n.images_path = map["images_path"].as<std::string>();
    if (n.images_path.is_relative())
      throw v.error(n.name + ": images_path is a path on the node's host: give it in full");
  }
  if (map["pool"]) n.pool = map["pool"].as<std::string>();
  n.networks = words(v, map["networks"], n.name + ": networks");
  n.bridges = words(v, map["bridges"], n.name + ": bridges");
  if (const auto labels = map["labels"]) {
    if (!labels.IsMap()) throw v.error(n.name + ": labels: expected a mapping");
    for (const auto& entry : labels)
      n.labels[entry.first.as<std::string>()] = entry.second.as<std::string>();
  }
  read_reserve(v, map["reserve"], n);
  if (map["ssh_host_key"]) n.ssh_host_key = map["ssh_host_key"].as<std::string>();
  if (!n.ssh_host_key.empty() && n.ssh_host_key.rfind("ssh-", 0) != 0 &&
      n.ssh_host_key.rfind("ecdsa-", 0) != 0)
    throw v.error(n.name +
                  ": ssh_host_key: expected an OpenSSH public key line (ssh-ed25519 "
                  "AAAA...), as in the host's /etc/ssh/ssh_host_ed25519_key.pub");
  if (map["ssh_key"]) {
    n.ssh_key = map["ssh_key"].as<std::string>();
    if (n.ssh_key.is_relative()) throw v.error(n.name + ": ssh_key: give the path in full");
  }
  return n;
}

}  // namespace

namespace parse {

std::vector<NodeSetting> nodes(const SettingValue& v) {
  std::vector<NodeSetting> out;
  std::set<std::string> names;
  for (const auto& item : v.items) {
    if (item.empty()) continue;
    YAML::Node node;
    try {
      node = YAML::Load(item);
    } catch (const YAML::Exception& e) {
      throw v.error("not YAML: " + e.msg);
    }
    std::vector<YAML::Node> maps;
    if (node.IsSequence())
      for (const auto& m : node) maps.push_back(m);
    else
      maps.push_back(node);
    for (const auto& m : maps) {
      try {
        out.push_back(node_of(v, m));
      } catch (const YAML::Exception& e) {
        throw v.error("a node's fields are text: " + e.msg);
      }
      if (!names.insert(out.back().name).second)
        throw v.error("two nodes are named " + out.back().name);
    }
  }
  return out;
}

}  // namespace parse

std::string show_nodes(const std::vector<NodeSetting>& nodes) {
  if (nodes.empty()) return "(none)";
  std::string out;
  for (const auto& n : nodes) {
    YAML::Emitter e;
    e << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << n.name << YAML::Key
      << "kind" << YAML::Value << n.kind;
    if (!n.uri.empty()) e << YAML::Key << "uri" << YAML::Value << n.uri;
    if (!n.images_path.empty())
      e << YAML::Key << "images_path" << YAML::Value << n.images_path.string();
    if (!n.pool.empty()) e << YAML::Key << "pool" << YAML::Value << n.pool;
    e << YAML::EndMap;
    out += (out.empty() ? "" : ", ") + std::string(e.c_str());
  }
  return out;
}

}  // namespace bowline::server
