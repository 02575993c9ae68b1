// Golden files: the seed documents of five templates, through the real path (template text ->
// spec -> make_plan -> render_seed), compared byte for byte with tests/unit/guest/golden/.
// BOWLINE_UPDATE_GOLDEN=1 rewrites them from the current output; review the diff before
// committing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "cloud_init_test_support.hpp"
#include "guest/cloud_init.hpp"

namespace bowline::guest {
namespace {

namespace fs = std::filesystem;

const char* kOwnerKey =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@laptop";

struct GoldenCase {
  const char* name;
  bool bridged;
  const char* yaml;
};

const GoldenCase kCases[] = {
    {"bridged", true, R"y(
name: ${{ .user.username }}-${{ .space.name }}
hostname: ${{ .space.name }}
image: debian-12
memory: 2G
cpus: 2
network: {mode: bridged, cidr: 198.51.100.0/24, bridge: br0, gateway: 198.51.100.1}
environment:
  - EDITOR=vim
  - "GREETING=it's a \"test\": $HOME `id` #1"
sshKeys:
  - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO0YJqpgw7lmoOfackKCKbYpE/sRiR+X2GqmHbnaDtW9 ops@bastion
)y"},
    {"nat", false, R"y(
image: debian-12
network: {mode: nat, bridge: default}
networks: [{name: storage}]
)y"},
    {"netplan-dhcp", false, R"y(
image: ubuntu-24.04
network: {mode: nat, bridge: default}
networks: [{name: storage}]
netplanDhcp: true
)y"},
    {"cloud-config-merge", false, R"y(
image: debian-12
network: {mode: nat}
environment: [LANG=C.UTF-8]
cloudInit: |
  #cloud-config
  package_update: yes
  packages: [htop]
  users: [default]
  runcmd:
    - 'echo "TEST: merged runcmd" > /dev/console'
  write_files:
    - path: /etc/motd
      content: |
        Welcome!
)y"},
    {"script-mime", true, R"y(
image: debian-12
network: {cidr: 198.51.100.0/24, bridge: br0}
cloudInit: |
  #!/bin/sh
  echo "TEST: user script ran on $(hostname)" > /dev/console
)y"},
};

void check_golden(const fs::path& path, const std::optional<std::string>& actual) {
  if (const char* update = std::getenv("BOWLINE_UPDATE_GOLDEN"); update && *update == '1') {
    fs::create_directories(path.parent_path());
    if (actual)
      test::write_file(path, *actual);
    else
      fs::remove(path);
    return;
  }
  if (!actual) {
    EXPECT_FALSE(fs::exists(path)) << path << " should not exist (no such document)";
    return;
  }
  ASSERT_TRUE(fs::exists(path)) << path << " is missing: run with BOWLINE_UPDATE_GOLDEN=1";
  EXPECT_EQ(test::read_file(path), *actual)
      << path << " differs (BOWLINE_UPDATE_GOLDEN=1 regenerates it)";
}

class Golden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(Golden, MatchesTheFiles) {
  const auto& c = GetParam();
  const auto plan = test::template_plan(c.yaml, c.bridged, {kOwnerKey});
  const auto docs = render_seed(plan.guest);
  const fs::path dir = fs::path(BOWLINE_SOURCE_DIR) / "tests/unit/guest/golden" / c.name;
  check_golden(dir / "user-data", docs.user_data);
  check_golden(dir / "meta-data", docs.meta_data);
  check_golden(dir / "network-config", docs.network_config);
  // Every golden document is one cloud-init can read.
  if (docs.user_data.starts_with("#cloud-config")) {
    EXPECT_NO_THROW(test::pyyaml_load(docs.user_data));
  } else {
    EXPECT_NO_THROW(test::mime_parts(docs.user_data));
  }
  EXPECT_NO_THROW(test::pyyaml_load(docs.meta_data));
  if (docs.network_config) {
    EXPECT_NO_THROW(test::pyyaml_load(*docs.network_config));
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, Golden, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<GoldenCase>& param_info) {
                           std::string name = param_info.param.name;
                           for (auto& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace bowline::guest
