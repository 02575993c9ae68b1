// The stand-in for engine::HostProbe in unit tests: a host whose network bridges the test names.
// A node asks it whether a template's bridge exists and which ports (NICs, taps) it has; here
// the answer is `bridges`, or, with `every_bridge`, any name is a bridge with those ports.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/host_probe.hpp"

namespace bowline::doubles {

class FakeHostProbe final : public engine::HostProbe {
 public:
  using Ports = std::vector<std::string>;

  // A host without bridges (NAT spaces only).
  static FakeHostProbe no_bridges() { return {}; }
  // A host with one bridge `name` and its ports.
  static FakeHostProbe with_bridge(const std::string& name, Ports ports = {"eth0"}) {
    FakeHostProbe probe;
    probe.bridges[name] = std::move(ports);
    return probe;
  }
  // A host on which every name a template gives is a bridge with `ports`.
  static FakeHostProbe any_bridge(Ports ports = {"eth0"}) {
    FakeHostProbe probe;
    probe.every_bridge = std::move(ports);
    return probe;
  }

  bool bridge_exists(const std::string& name) const override {
    return every_bridge || bridges.count(name) != 0;
  }
  Ports bridge_ports(const std::string& name) const override {
    if (every_bridge) return *every_bridge;
    const auto it = bridges.find(name);
    return it == bridges.end() ? Ports{} : it->second;
  }

  std::map<std::string, Ports> bridges;  // name -> ports; a test may change it between calls
  std::optional<Ports> every_bridge;     // set: every name is a bridge with these ports
};

}  // namespace bowline::doubles
