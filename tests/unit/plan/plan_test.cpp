#include "plan/plan.hpp"
#include "plan/change_parts.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <regex>

#include "spec/loader.hpp"

namespace bowline::plan {
namespace {

spec::Spec load(const std::string& yaml,
                spec::Variables vars = {{"user.username", "alice"}, {"space.name", "dev"}}) {
  auto result = spec::load_spec(yaml, &vars);
  EXPECT_TRUE(result.spec.has_value());
  for (const auto& d : result.diagnostics.items()) ADD_FAILURE() << spec::format(d, "spec");
  return *result.spec;
}

const char* kBridged = R"(
image: debian-12
memory: 1G
network: {cidr: 198.51.100.0/24, bridge: testbr0}
)";

const char* kNat = R"(
image: debian-12
network: {mode: nat, bridge: isolated}
networks: [{name: storage}]
)";

Owner alice() {
  return {"alice", "alice@example.org", "Europe/Berlin", "u1", password_hash("s3cret", "space-1"),
          {}};
}

SpaceFacts facts(std::optional<spec::Ipv4Address> ip = spec::Ipv4Address::parse("198.51.100.10")) {
  SpaceFacts f;
  f.id = "space-1";
  f.name = "dev";
  f.ip = ip;
  f.uuid = "0f0e0d0c-0b0a-4908-9706-050403020100";
  f.vnc_password = "abcdefgh";
  return f;
}

TEST(Mac, IsLocallyAdministeredStableAndPerNic) {
  const auto mac = mac_for("space-1", 0);
  EXPECT_TRUE(std::regex_match(mac, std::regex("52:54:00:[0-9a-f]{2}:[0-9a-f]{2}:[0-9a-f]{2}")));
  EXPECT_EQ(mac, mac_for("space-1", 0));
  EXPECT_NE(mac, mac_for("space-1", 1));
  EXPECT_NE(mac, mac_for("space-2", 0));
}

// The UUID formula computed independently here, from the digest bytes.
std::string expected_seed_uuid(const std::string& input) {
  unsigned char digest[32];
  unsigned int n = 0;
  EVP_Digest(input.data(), input.size(), digest, &n, EVP_sha256(), nullptr);
  char hex[65];
  for (int i = 0; i < 32; ++i) snprintf(hex + 2 * i, 3, "%02x", digest[i]);
  std::string h(hex, 64);
  h[12] = '4';
  h[16] = '9';
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) +
         "-" + h.substr(20, 12);
}

TEST(UuidFromSeed, FollowsCozystacksLayout) {
  EXPECT_EQ(uuid_from_seed("tenant", "vm", "seed"), expected_seed_uuid("tenant-vm-seed"));
  EXPECT_EQ(uuid_from_seed("alice", "alice-dev", "x"), expected_seed_uuid("alice-alice-dev-x"));
  EXPECT_TRUE(std::regex_match(
      uuid_from_seed("a", "b", "c"),
      std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-9[0-9a-f]{3}-[0-9a-f]{12}")));
}

TEST(PasswordHash, IsSha512CryptStablePerSpace) {
  const auto hash = password_hash("s3cret", "space-1");
  EXPECT_TRUE(hash.starts_with("$6$"));
  EXPECT_EQ(hash, password_hash("s3cret", "space-1"));
  EXPECT_NE(hash, password_hash("s3cret", "space-2"));  // the salt differs per space
  EXPECT_NE(hash, password_hash("other", "space-1"));
}

TEST(MakePlan, BridgedSpaceGetsItsAddressGatewayAndResolvers) {
  const auto p = make_plan(load(kBridged), alice(), facts(), NodeSettings{});
  EXPECT_EQ(p.domain_name, "alice-dev");
  EXPECT_EQ(p.guest.hostname, "dev");
  EXPECT_EQ(p.memory_bytes, 1ull << 30);
  EXPECT_EQ(p.space_dir, "/var/lib/libvirt/images/bowline/alice-dev");
  EXPECT_EQ(p.system_disk.path, p.space_dir + "/disk.qcow2");
  EXPECT_EQ(p.system_disk.target, "vda");
  ASSERT_EQ(p.nics.size(), 1u);
  EXPECT_EQ(p.nics[0].type, NicType::Bridge);
  EXPECT_EQ(p.nics[0].source, "testbr0");
  EXPECT_EQ(p.guest.address->to_string(), "198.51.100.10");
  EXPECT_EQ(p.guest.gateway->to_string(), "198.51.100.1");  // the network's first address
  EXPECT_EQ(p.guest.resolvers, (std::vector<std::string>{"1.1.1.1", "1.0.0.1"}));
  EXPECT_EQ(p.uuid, "0f0e0d0c-0b0a-4908-9706-050403020100");
  ASSERT_TRUE(p.guest.password_hash.has_value());
  EXPECT_EQ(p.firmware.bootloader, spec::Bootloader::Bios);
}

TEST(MakePlan, BridgedWithoutAnAddressIsRefused) {
  EXPECT_THROW(make_plan(load(kBridged), alice(), facts(std::nullopt), NodeSettings{}),
               std::invalid_argument);
  EXPECT_THROW(make_plan(load(kBridged), alice(), facts(spec::Ipv4Address::parse("203.0.113.5")),
                         NodeSettings{}),
               std::invalid_argument);
}

TEST(MakePlan, NatSpaceUsesTheLibvirtNetworksAndNoStaticAddress) {
  const auto p = make_plan(load(kNat), alice(), facts(std::nullopt), NodeSettings{});
  ASSERT_EQ(p.nics.size(), 2u);
  EXPECT_EQ(p.nics[0].type, NicType::Network);
  EXPECT_EQ(p.nics[0].source, "isolated");
  EXPECT_EQ(p.nics[1].source, "storage");
  EXPECT_NE(p.nics[0].mac, p.nics[1].mac);
  EXPECT_FALSE(p.guest.address.has_value());
}

// The guest's part needs no node: what a KubeVirt node renders as its cloud-init Secret is what
// a libvirt node writes into the seed, and the NICs carry the guest plan's MACs.
TEST(MakeGuestPlan, IsThePlansGuestPartWithoutANode) {
  const auto spec = load(kNat);
  NodeSettings node;
  node.images_path = "/elsewhere";
  node.resolvers = {"198.51.100.53"};
  const auto p = make_plan(spec, alice(), facts(std::nullopt), node);
  const auto g = make_guest_plan(spec, alice(), facts().id, std::nullopt);
  EXPECT_EQ(g.hostname, p.guest.hostname);
  EXPECT_EQ(g.instance_id, p.guest.instance_id);
  EXPECT_EQ(g.username, p.guest.username);
  EXPECT_EQ(g.password_hash, p.guest.password_hash);
  EXPECT_EQ(g.ssh_keys, p.guest.ssh_keys);
  EXPECT_EQ(g.primary_mac, p.nics[0].mac);
  ASSERT_EQ(g.extra_macs.size(), 1u);
  EXPECT_EQ(g.extra_macs[0], p.nics[1].mac);
  EXPECT_TRUE(g.resolvers.empty()) << "a NAT guest's resolvers come by DHCP";
}

// The instance-id is the space's for life: cloud-init would otherwise make new SSH host keys
// (and run the template's per-instance cloud-config again) after a template change or set-ip.
TEST(MakePlan, InstanceIdIsTheSpacesForLife) {
  const auto spec = load(kBridged);
  const auto base = make_plan(spec, alice(), facts(), NodeSettings{});
  EXPECT_EQ(base.guest.instance_id,
            make_plan(spec, alice(), facts(), NodeSettings{}).guest.instance_id);
  auto bigger = spec;
  bigger.sizing.memory_bytes *= 2;
  EXPECT_EQ(base.guest.instance_id,
            make_plan(bigger, alice(), facts(), NodeSettings{}).guest.instance_id);
  EXPECT_EQ(
      base.guest.instance_id,
      make_plan(spec, alice(), facts(spec::Ipv4Address::parse("198.51.100.11")), NodeSettings{})
          .guest.instance_id)
      << "a new address is applied at boot, not by a new instance";
  auto renamed = spec;
  renamed.hostname = "other";
  EXPECT_EQ(base.guest.instance_id,
            make_plan(renamed, alice(), facts(), NodeSettings{}).guest.instance_id);
  // Another space (a clone, a recreated space) is another instance.
  auto other = facts();
  other.id = "7d0f0a52-0000-4000-8000-000000000002";
  EXPECT_NE(base.guest.instance_id,
            make_plan(spec, alice(), other, NodeSettings{}).guest.instance_id);
}

// A changed cloudInit is a new instance (cloud-init applies it at the next start); the
// identity the boot script keeps the machine-id by stays the space's.
TEST(MakePlan, AChangedCloudInitIsANewInstanceOfTheSameIdentity) {
  const auto spec = load(kBridged);
  const auto space = facts();
  const auto first = base_instance_id(space.id);
  EXPECT_EQ(make_plan(spec, alice(), space, NodeSettings{}).guest.instance_id, first);
  // Never started, or started by an older server: no applied fingerprint, the first instance.
  EXPECT_EQ(next_instance_id(space.id, "", "", "aaaabbbbccccdddd"), first);
  EXPECT_EQ(next_instance_id(space.id, "", "aaaabbbbccccdddd", "aaaabbbbccccdddd"), first);
  const auto second = next_instance_id(space.id, "", "aaaabbbbccccdddd", "1111222233334444");
  EXPECT_NE(second, first);
  EXPECT_TRUE(second.starts_with(first)) << second;
  // Kept while the cloudInit stays; another change, another instance, even back to an old one.
  EXPECT_EQ(next_instance_id(space.id, second, "1111222233334444", "1111222233334444"), second);
  const auto third = next_instance_id(space.id, second, "1111222233334444", "aaaabbbbccccdddd");
  EXPECT_NE(third, second);
  EXPECT_NE(third, first);
  EXPECT_NE(next_instance_id(space.id, third, "aaaabbbbccccdddd", "1111222233334444"), third);

  auto changed = space;
  changed.instance_id = second;
  const auto plan = make_plan(spec, alice(), changed, NodeSettings{});
  EXPECT_EQ(plan.guest.instance_id, second);
  EXPECT_EQ(plan.guest.identity, first) << "the machine-id follows the space, not its cloudInit";
}

TEST(MakePlan, CloudInitSeedDrivesTheUuid) {
  const auto spec = load(std::string(kBridged) + "cloudInitSeed: abc\n");
  const auto p = make_plan(spec, alice(), facts(), NodeSettings{});
  EXPECT_EQ(p.uuid, expected_seed_uuid("alice-alice-dev-abc"));
}

TEST(MakePlan, PreferenceDefaultsFirmwareDiskBusAndNic) {
  const auto spec = load(R"(
image: win.qcow2
instanceProfile: windows.11
resources: {cpu: 2, sockets: 1, memory: 8Gi}
network: {mode: nat}
)");
  const auto p = make_plan(spec, alice(), facts(std::nullopt), NodeSettings{});
  EXPECT_EQ(p.firmware.bootloader, spec::Bootloader::Uefi);
  EXPECT_TRUE(p.firmware.secure_boot);
  EXPECT_TRUE(p.firmware.smm);
  EXPECT_FALSE(p.firmware.reset_nvram_on_start);  // windows.11 keeps its NVRAM
  EXPECT_EQ(p.firmware.loader, "/usr/share/OVMF/OVMF_CODE_4M.secboot.fd");
  EXPECT_EQ(p.firmware.nvram, p.space_dir + "/nvram.fd");
  EXPECT_EQ(p.system_disk.bus, "sata");
  EXPECT_EQ(p.system_disk.target, "sda");
  EXPECT_EQ(p.nics[0].model, "e1000e");
  EXPECT_EQ(p.sockets, 1u);
  EXPECT_EQ(p.cores, 2u);
}

// Without an image the first named disk is the system disk (the libvirt node replaces the
// preview paths with the files of the owner's disk objects).
TEST(MakePlan, NamedDisksFollowTheSystemDiskAndDisks0BootsWithoutImage) {
  NodeSettings node;
  node.images_path = "/v";
  const auto booting = make_plan(load("name: alice-dev\nnetwork: {mode: nat}\n"
                                      "disks: [{name: root, bus: sata}, {name: data}]\n"),
                                 alice(), facts(std::nullopt), node);
  EXPECT_EQ(booting.system_disk.path, "/v/volumes/root.qcow2");
  EXPECT_EQ(booting.system_disk.target, "sda");
  ASSERT_EQ(booting.data_disks.size(), 1u);
  EXPECT_EQ(booting.data_disks[0].path, "/v/volumes/data.qcow2");
  EXPECT_EQ(booting.data_disks[0].target, "vda");

  const auto imaged = make_plan(load("name: alice-dev\nimage: debian-12\nnetwork: {mode: nat}\n"
                                     "disks: [{name: root}, {name: data}]\n"),
                                alice(), facts(std::nullopt), node);
  EXPECT_EQ(imaged.system_disk.path, imaged.space_dir + "/disk.qcow2");
  ASSERT_EQ(imaged.data_disks.size(), 2u);
  EXPECT_EQ(imaged.data_disks[0].path, "/v/volumes/root.qcow2");
}

TEST(MakePlan, ExplicitUefiWithoutPersistenceResetsNvram) {
  const auto spec = load(std::string(kBridged) + "firmware: {bootloader: uefi}\n");
  const auto p = make_plan(spec, alice(), facts(), NodeSettings{});
  EXPECT_FALSE(p.firmware.secure_boot);
  EXPECT_TRUE(p.firmware.reset_nvram_on_start);
  EXPECT_EQ(p.firmware.loader, "/usr/share/OVMF/OVMF_CODE_4M.fd");
}

TEST(MakePlan, InstanceTypeTraitsBecomePlacementAndNotes) {
  const auto spec = load(R"(
image: debian-12
instanceType: cx1.large
network: {mode: nat}
gpus: [{name: nvidia.com/GA102GL_A10}, {name: pci_0000_65_00_0}]
devices: [usb_002_003]
)");
  const auto p = make_plan(spec, alice(), facts(std::nullopt), NodeSettings{});
  EXPECT_EQ(p.placement.hugepages_size, "2Mi");
  EXPECT_TRUE(p.placement.dedicated_cpu);
  EXPECT_EQ(p.sockets * p.cores, 2u);
  ASSERT_EQ(p.host_devices.size(), 2u);  // the USB device and the PCI GPU
  EXPECT_EQ(p.host_devices[0].kind(), spec::DeviceKind::Usb);
  EXPECT_EQ(std::get<spec::PciAddress>(p.host_devices[1].address).domain, 0u);
  EXPECT_EQ(std::get<spec::PciAddress>(p.host_devices[1].address).bus, 0x65u);
  bool noted_gpu = false;
  for (const auto& n : p.notes)
    noted_gpu = noted_gpu || n.find("nvidia.com/GA102GL_A10") != std::string::npos;
  EXPECT_TRUE(noted_gpu);
}

TEST(MakePlan, OwnerAndSpecKeysAreMergedWithoutDuplicates) {
  const std::string key =
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl a@b";
  auto spec = load(kBridged);
  spec.ssh_keys = {key};
  auto user = alice();
  user.ssh_keys = {key};
  const auto p = make_plan(spec, user, facts(), NodeSettings{});
  EXPECT_EQ(p.guest.ssh_keys.size(), 1u);
}

// Each part's fingerprint moves with its own fields only, so a pending change names the part
// that changed; the parts and their timing are the table in docs/templates.md.
TEST(ChangeParts, EachPartMovesWithItsOwnFieldsOnly) {
  const auto spec = load(kBridged);
  const auto base = change_parts(spec, make_plan(spec, alice(), facts(), NodeSettings{}));
  ASSERT_EQ(base.size(), part_rules().size());
  auto changed = [&](const spec::Spec& s, const Owner& u, const SpaceFacts& f) {
    std::vector<std::string> out;
    for (const auto& c : pending_changes(base, change_parts(s, make_plan(s, u, f, NodeSettings{}))))
      out.push_back(c.part);
    return out;
  };
  EXPECT_TRUE(changed(spec, alice(), facts()).empty());
  auto bigger = spec;
  bigger.sizing.memory_bytes *= 2;
  EXPECT_EQ(changed(bigger, alice(), facts()), std::vector<std::string>{"size"});
  auto env = spec;
  env.environment.push_back({"NEW", "1"});
  EXPECT_EQ(changed(env, alice(), facts()), std::vector<std::string>{"environment"});
  auto with_keys = alice();
  with_keys.ssh_keys.push_back("ssh-ed25519 AAAA other");
  EXPECT_EQ(changed(spec, with_keys, facts()), std::vector<std::string>{"account"});
  EXPECT_EQ(changed(spec, alice(), facts(spec::Ipv4Address::parse("198.51.100.11"))),
            std::vector<std::string>{"address"});
  auto script = spec;
  script.cloud_init = "#cloud-config\nruncmd: [date]\n";
  const auto pending = pending_changes(
      base, change_parts(script, make_plan(script, alice(), facts(), NodeSettings{})));
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].part, "cloudInit");
  EXPECT_EQ(pending[0].applies, Applies::NextStart);
  // Parts an older server did not record are not reported.
  EXPECT_TRUE(pending_changes({}, base).empty());
}

// GPUs libvirt must resolve at start: the instance type's (gn1 brings one), then the spec's
// resource names; PCI addresses are exact and need nothing.
TEST(ResourceGpus, TheInstanceTypesFirstThenTheSpecsNames) {
  auto r = spec::load_spec(
      "image: x\nnetwork: {mode: nat}\ninstanceType: gn1.xlarge\n"
      "gpus: [{name: nvidia.com/GA102GL_A10}, {name: pci_0000_01_00_0}]\n",
      nullptr);
  ASSERT_TRUE(r.spec);
  EXPECT_EQ(resource_gpus(*r.spec),
            (std::vector<std::string>{"nvidia.com/A400", "nvidia.com/GA102GL_A10"}));
}

}  // namespace
}  // namespace bowline::plan
