// A Cozystack VM values file is a template as it is written: every parameter at its documented
// default validates, each "" default means the same as leaving the field out, a network-less
// file gets the node's own network, and everything else stays as strict as before.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "spec/spec_json.hpp"
#include "spec_test_support.hpp"

namespace bowline::spec {
namespace {

using test::HasError;
using test::HasWarning;
using test::load;
using test::Valid;

// Every parameter of Cozystack's VM app at its documented default, plus the one disk a VM needs
// to boot from (Cozystack's own default list is empty, and no VM boots without a disk).
constexpr const char* kDefaults = R"(external: false
externalMethod: PortList
externalPorts:
  - 22
externalAllowICMP: true
runStrategy: Always
instanceType: u1.medium
instanceProfile: ubuntu
disks:
  - name: system
    bus: ""
networks: []
subnets: []
gpus: []
cpuModel: ""
firmware:
  bootloader: ""
  secureBoot: false
  efiPersistent: false
resources:
  cpu: ""
  memory: ""
  sockets: ""
sshKeys: []
cloudInit: ""
netplanDhcp: false
cloudInitSeed: ""
)";

TEST(cozystack_values, EveryDefaultWrittenOutIsAValidTemplate) {
  const auto r = load(kDefaults);
  ASSERT_TRUE(Valid(r));
  const auto& s = *r.spec;
  EXPECT_EQ(s.network.mode, NetworkMode::Nat) << "no network: the node's own";
  EXPECT_EQ(s.network.bridge, "default");
  EXPECT_THAT(s.origins.at("network"), ::testing::StartsWith("default"));
  EXPECT_EQ(s.instance_type, "u1.medium");
  EXPECT_EQ(s.instance_profile, "ubuntu");
  EXPECT_FALSE(s.cpu_model);
  EXPECT_FALSE(s.firmware.bootloader);
  EXPECT_FALSE(s.cloud_init) << "cloudInit: \"\" is no cloud-init of the template's";
  EXPECT_FALSE(s.cloud_init_seed);
  EXPECT_FALSE(s.resources.cpu);
  EXPECT_FALSE(s.resources.memory_bytes);
  ASSERT_EQ(s.disks.size(), 1u);
  EXPECT_FALSE(s.disks[0].bus);
  for (const auto& d : r.diagnostics.items())
    EXPECT_NE(d.severity, Severity::Error) << d.path << ": " << d.message;
}

// Each "" default, alone, is the same template as the field left out.
TEST(cozystack_values, EachEmptyDefaultIsTheFieldLeftOut) {
  const std::string base = "image: debian-12\nnetwork: {mode: nat}\n";
  const std::pair<const char*, const char*> cases[] = {
      {"cpuModel: \"\"\n", ""},
      {"firmware: {bootloader: \"\"}\n", "firmware: {}\n"},
      {"disks: [{name: data, bus: \"\"}]\n", "disks: [{name: data}]\n"},
      {"resources: {cpu: \"\", memory: \"\", sockets: \"\"}\n", ""},
      {"resources: {cpu: \"\"}\n", ""},
      {"cloudInit: \"\"\n", ""},
      {"cloudInitSeed: \"\"\n", ""},
      {"instanceType: u1.medium\nresources: {cpu: \"\", memory: \"\", sockets: \"\"}\n",
       "instanceType: u1.medium\n"},
  };
  for (const auto& [written, left_out] : cases) {
    SCOPED_TRACE(written);
    const auto a = load(base + written);
    const auto b = load(base + left_out);
    ASSERT_TRUE(Valid(a));
    ASSERT_TRUE(Valid(b));
    EXPECT_EQ(to_json(*a.spec).dump(), to_json(*b.spec).dump());
  }
}

// cpu or sockets on its own sizes nothing: ignored, saying so, as Cozystack documents.
TEST(cozystack_values, CpuOrSocketsAloneIsIgnoredWithAWarning) {
  for (const char* block : {"resources: {cpu: 4}\n", "resources: {sockets: 2}\n"}) {
    SCOPED_TRACE(block);
    const auto r = load(std::string("image: debian-12\n") + block);
    ASSERT_TRUE(Valid(r));
    EXPECT_TRUE(HasWarning(r, "resources", 2, 12, "ignored: resources size the VM only with"));
    EXPECT_NE(r.spec->sizing.source, SizingSource::Resources);
  }
  // Beside an instance type the same block is refused, as Cozystack does.
  const auto typed = load("image: debian-12\ninstanceType: u1.large\nresources: {cpu: 4}\n");
  EXPECT_TRUE(HasError(typed, "resources", 3, 12, "cannot be combined with resources"));
}

// Only "" means "the default": every other invalid value still fails at its line and column.
TEST(cozystack_values, EverythingElseStaysStrict) {
  const std::string base = "image: debian-12\n";
  EXPECT_TRUE(HasError(load(base + "cpuModel: 'Skylake Server'\n"), "cpuModel", 2, 11,
                       "is not a CPU model name"));
  EXPECT_TRUE(HasError(load(base + "firmware: {bootloader: efi}\n"), "firmware.bootloader", 2, 24,
                       "\"efi\" is not one of uefi, bios"));
  EXPECT_TRUE(HasError(load(base + "disks: [{name: data, bus: ide}]\n"), "disks[0].bus", 2, 27,
                       "\"ide\" is not one of virtio, sata, scsi, usb"));
  EXPECT_TRUE(HasError(load(base + "resources: {cpu: '0', sockets: 1, memory: 1Gi}\n"),
                       "resources.cpu", 2, 18, "expected a whole number"));
  EXPECT_TRUE(HasError(load(base + "network: {mode: wifi}\n"), "network.mode", 2, 17,
                       "is not a network mode"));
  EXPECT_TRUE(HasError(load(base + "cloudInit: \"#cloud-config\\n- a\\n\"\n"), "cloudInit", 2, 12,
                       "#cloud-config must be a YAML mapping"));
}

}  // namespace
}  // namespace bowline::spec
