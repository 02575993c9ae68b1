// The network: block. Its values must be literal: they are checked when the template is
// saved, long before any space (and any variable value) exists.
#include "spec/builder.hpp"

namespace bowline::spec {
namespace {

const std::vector<std::string_view> kNetworkFields = {"mode",           "bridge",       "cidr",
                                                      "ip_range_start", "ip_range_end", "gateway"};

// A network field's value, which must be literal.
std::optional<Scalar> literal(Reader& r, const YAML::Node& node, const char* key) {
  return r.scalar(node[key], field_path("network", key), true);
}

}  // namespace

void SpecBuilder::read_network(const YAML::Node& node) {
  if (Reader::absent(node)) {
    // A Cozystack values file has no network: the node's own: NAT on libvirt's default
    // network, the pod network on KubeVirt.
    spec_.network.mode = NetworkMode::Nat;
    spec_.network.bridge = "default";
    spec_.origins["network"] =
        "default (nat on libvirt's network \"default\"; the pod network on kubevirt)";
    return;
  }
  if (!r_.mapping(node, "network", kNetworkFields)) return;
  read_network_mode(node);
  read_network_bridge(node);
  if (spec_.network.mode == NetworkMode::Nat) {
    for (const char* key : {"cidr", "ip_range_start", "ip_range_end", "gateway"})
      if (!Reader::absent(node[key]))
        r_.error(node[key], field_path("network", key),
                 "must not be set in nat mode: the VM gets its address from the libvirt network");
    return;
  }
  read_network_cidr(node);
  read_network_range(node);
}

void SpecBuilder::read_network_mode(const YAML::Node& node) {
  if (auto mode = literal(r_, node, "mode")) {
    if (mode->text == "nat")
      spec_.network.mode = NetworkMode::Nat;
    else if (mode->text == "bridged" || mode->text.empty())
      spec_.network.mode = NetworkMode::Bridged;
    else
      r_.error(node["mode"], "network.mode",
               "\"" + mode->text + "\" is not a network mode: use bridged or nat");
  }
}

// A host bridge in bridged mode, a libvirt network in nat mode; each has its default.
void SpecBuilder::read_network_bridge(const YAML::Node& node) {
  auto& net = spec_.network;
  auto bridge = literal(r_, node, "bridge");
  if (!bridge || bridge->text.empty()) {
    net.bridge = net.mode == NetworkMode::Nat ? "default" : "br0";
    return;
  }
  net.bridge = bridge->text;
  const bool ok =
      bridge->text.size() <= 15 &&
      bridge->text.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == std::string::npos;
  if (!ok && net.mode == NetworkMode::Bridged)
    r_.error(node["bridge"], "network.bridge",
             "\"" + bridge->text +
                 "\" is not a bridge name (at most 15 letters, digits, '_', '.', '-')");
  if (net.mode == NetworkMode::Nat && bridge->text.find_first_of("/<>&'\"\n") != std::string::npos)
    r_.error(node["bridge"], "network.bridge",
             "\"" + bridge->text + "\" is not a libvirt network name");
}

void SpecBuilder::read_network_cidr(const YAML::Node& node) {
  auto& net = spec_.network;
  if (auto cidr = literal(r_, node, "cidr")) {
    net.cidr = Ipv4Network::parse(cidr->text);
    if (!net.cidr)
      r_.error(node["cidr"], "network.cidr",
               "\"" + cidr->text +
                   "\" is not an IPv4 network in CIDR form with the host bits zero (e.g. "
                   "198.51.100.0/24)");
  } else if (Reader::absent(node["cidr"])) {
    r_.error(node, "network.cidr", "bridged mode needs the network's cidr (e.g. 198.51.100.0/24)");
  }
}

// An address field; without a valid cidr it is still checked, all but its containment.
std::optional<Ipv4Address> SpecBuilder::read_network_address(const YAML::Node& node,
                                                             const char* key) {
  const auto& cidr = spec_.network.cidr;
  auto s = literal(r_, node, key);
  if (!s) return std::nullopt;
  auto a = Ipv4Address::parse(s->text);
  if (!a) {
    r_.error(node[key], field_path("network", key), "\"" + s->text + "\" is not an IPv4 address");
    return std::nullopt;
  }
  if (cidr && !cidr->contains(*a)) {
    r_.error(node[key], field_path("network", key),
             a->to_string() + " is outside the network " + cidr->to_string());
    return std::nullopt;
  }
  return a;
}

// The address range (both ends or neither: the whole network) and the gateway.
void SpecBuilder::read_network_range(const YAML::Node& node) {
  auto& net = spec_.network;
  const auto start = read_network_address(node, "ip_range_start");
  const auto end = read_network_address(node, "ip_range_end");
  net.gateway = read_network_address(node, "gateway");
  const bool has_start = !Reader::absent(node["ip_range_start"]);
  const bool has_end = !Reader::absent(node["ip_range_end"]);
  if (has_start != has_end) {
    r_.error(has_start ? node["ip_range_start"] : node["ip_range_end"], "network",
             "give both ip_range_start and ip_range_end, or neither (the whole network)");
    return;
  }
  if (start && end && *end < *start) {
    r_.error(node["ip_range_start"], "network.ip_range_start",
             start->to_string() + " is after the range end " + end->to_string());
    return;
  }
  if (!net.cidr) return;
  net.range_start = start ? *start : net.cidr->first_usable();
  net.range_end = end ? *end : net.cidr->last_usable();
}

}  // namespace bowline::spec
