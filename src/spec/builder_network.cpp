// The network: block. Its values must be literal: they are checked when the template is
// saved, long before any space (and any variable value) exists.
#include "spec/builder.hpp"

namespace bowline::spec {
namespace {

const std::vector<std::string_view> kNetworkFields = {"mode",           "bridge",       "cidr",
                                                      "ip_range_start", "ip_range_end", "gateway"};

}  // namespace

void SpecBuilder::read_network(const YAML::Node& node) {
  if (Reader::absent(node)) {
    r_.error(Reader::key_of(r_.document().root(), "network"), "network",
             "network must be set: mode bridged (with cidr) or mode nat");
    return;
  }
  if (!r_.mapping(node, "network", kNetworkFields)) return;
  auto literal = [&](const char* key) {
    return r_.scalar(node[key], field_path("network", key), true);
  };

  auto& net = spec_.network;
  if (auto mode = literal("mode")) {
    if (mode->text == "nat")
      net.mode = NetworkMode::Nat;
    else if (mode->text == "bridged" || mode->text.empty())
      net.mode = NetworkMode::Bridged;
    else
      r_.error(node["mode"], "network.mode",
               "\"" + mode->text + "\" is not a network mode: use bridged or nat");
  }
  if (auto bridge = literal("bridge"); bridge && !bridge->text.empty()) {
    net.bridge = bridge->text;
    const bool ok = bridge->text.size() <= 15 &&
                    bridge->text.find_first_not_of(
                        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") ==
                        std::string::npos;
    if (!ok && net.mode == NetworkMode::Bridged)
      r_.error(node["bridge"], "network.bridge",
               "\"" + bridge->text +
                   "\" is not a bridge name (at most 15 letters, digits, '_', '.', '-')");
    if (net.mode == NetworkMode::Nat &&
        bridge->text.find_first_of("/<>&'\"\n") != std::string::npos)
      r_.error(node["bridge"], "network.bridge",
               "\"" + bridge->text + "\" is not a libvirt network name");
  } else {
    net.bridge = net.mode == NetworkMode::Nat ? "default" : "br0";
  }

  if (net.mode == NetworkMode::Nat) {
    for (const char* key : {"cidr", "ip_range_start", "ip_range_end", "gateway"})
      if (!Reader::absent(node[key]))
        r_.error(node[key], field_path("network", key),
                 "must not be set in nat mode: the VM gets its address from the libvirt network");
    return;
  }

  // Without a valid cidr the addresses are still checked, all but their containment.
  if (auto cidr = literal("cidr")) {
    net.cidr = Ipv4Network::parse(cidr->text);
    if (!net.cidr)
      r_.error(node["cidr"], "network.cidr",
               "\"" + cidr->text +
                   "\" is not an IPv4 network in CIDR form with the host bits zero (e.g. "
                   "198.51.100.0/24)");
  } else if (Reader::absent(node["cidr"])) {
    r_.error(node, "network.cidr", "bridged mode needs the network's cidr (e.g. 198.51.100.0/24)");
  }
  auto address = [&](const char* key) -> std::optional<Ipv4Address> {
    auto s = literal(key);
    if (!s) return std::nullopt;
    auto a = Ipv4Address::parse(s->text);
    if (!a) {
      r_.error(node[key], field_path("network", key), "\"" + s->text + "\" is not an IPv4 address");
      return std::nullopt;
    }
    if (net.cidr && !net.cidr->contains(*a)) {
      r_.error(node[key], field_path("network", key),
               a->to_string() + " is outside the network " + net.cidr->to_string());
      return std::nullopt;
    }
    return a;
  };
  const auto start = address("ip_range_start");
  const auto end = address("ip_range_end");
  net.gateway = address("gateway");
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
