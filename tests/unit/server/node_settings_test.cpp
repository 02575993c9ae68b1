// server.nodes: each entry checked into a NodeSetting, with an error naming the setting and the
// node for anything it cannot take.
#include "server/node_settings.hpp"

#include <gtest/gtest.h>

#include "server/settings_value.hpp"

namespace bowline::server {
namespace {

SettingValue value_of(std::vector<std::string> items) {
  SettingValue v;
  v.items = std::move(items);
  v.key = "server.nodes";
  v.origin = "--nodes";
  v.source = SettingSource::Flag;
  return v;
}

std::string error_of(const std::string& item) {
  try {
    parse::nodes(value_of({item}));
  } catch (const SettingsError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(NodeSettings, AnEntryCarriesItsFields) {
  const auto nodes = parse::nodes(
      value_of({"{name: node2, uri: 'qemu+ssh://root@h2/system', pool: bowline, bridges: [br0], "
                "labels: {rack: b}, reserve: {memory: 2G, cpus: 1}}",
                "[{name: node3, uri: 'qemu+tls://h3/system', images_path: /srv/images}]"}));
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].name, "node2");
  EXPECT_EQ(nodes[0].kind, "libvirt");
  EXPECT_EQ(nodes[0].uri, "qemu+ssh://root@h2/system");
  EXPECT_EQ(nodes[0].pool, "bowline");
  EXPECT_EQ(nodes[0].bridges, std::vector<std::string>{"br0"});
  EXPECT_EQ(nodes[0].labels.at("rack"), "b");
  EXPECT_EQ(nodes[0].reserve_memory, 2ull << 30);
  EXPECT_EQ(nodes[0].reserve_cpus, 1u);
  EXPECT_EQ(nodes[1].images_path, "/srv/images");
  EXPECT_NE(show_nodes(nodes).find("name: node3"), std::string::npos);
}

TEST(NodeSettings, WhatItCannotTakeIsNamed) {
  EXPECT_NE(error_of("{name: local, uri: 'qemu:///system'}").find("\"local\" is the node of"),
            std::string::npos);
  EXPECT_NE(error_of("{name: Node_2, uri: 'qemu:///system'}").find("is not a node name"),
            std::string::npos);
  EXPECT_NE(error_of("{name: n2}").find("n2: a libvirt node needs uri:"), std::string::npos);
  EXPECT_NE(error_of("{name: n2, uri: x, colour: red}").find("unknown node field colour"),
            std::string::npos);
  EXPECT_NE(error_of("{name: n2, uri: x, images_path: images}").find("give it in full"),
            std::string::npos);
  EXPECT_NE(error_of("{name: n2, uri: x, reserve: {memory: lots}}").find("n2: reserve: memory:"),
            std::string::npos);
  EXPECT_NE(error_of("[{name: n2, uri: x}, {name: n2, uri: y}]").find("two nodes are named n2"),
            std::string::npos);
  EXPECT_NE(error_of("{name: n2").find("not YAML"), std::string::npos);
  EXPECT_NE(error_of("{name: n2, uri: x, ssh_host_key: AAAAC3Nza}").find("OpenSSH public key"),
            std::string::npos);
  EXPECT_NE(error_of("{name: n2, uri: x, ssh_key: id_ed25519}").find("ssh_key: give the path"),
            std::string::npos);
  // Every error names the setting and where its value came from.
  EXPECT_NE(error_of("{name: n2}").find("server.nodes (flag --nodes)"), std::string::npos);
}

}  // namespace
}  // namespace bowline::server
