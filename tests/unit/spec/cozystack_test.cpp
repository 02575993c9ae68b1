// Cozystack's parameters besides sizing: firmware, cpuModel, gpus, disks, networks, subnets,
// sshKeys, cloudInit, netplanDhcp, cloudInitSeed, runStrategy and external access; and the
// template switches display and console.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "spec/boot_disk.hpp"
#include "spec/validators.hpp"
#include "spec_test_support.hpp"

namespace bowline::spec {
namespace {

using test::ErrorCount;
using test::HasError;
using test::HasWarning;
using test::load;
using test::Valid;

// Real keys, made once with ssh-keygen.
const std::string kEd25519 =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJqg2qFNXiCtrSZGMJZEv0uFtJQZkLrZZA9IVed3OCxC alice@laptop";
const std::string kRsa =
    "ssh-rsa "
    "AAAAB3NzaC1yc2EAAAADAQABAAABAQCWBa0jPn5IwIBbfWXVNQqCeY3rsQEaZzrkTlAFKYhi4k1h4Kb0iNRkUwezbKoOG/"
    "K/+Fg57l17Pm4xUuLso/"
    "1rPrRMgAiAINjLZNvhoIFOm2CtPWFaBfJXu4dQRupjVwKnBMQ2LB5Sw0aYBSmM0mygWuiznRaj5n"
    "2vo+okrUzL7+RthlayIJ/un3Ti/YPMlzv6bffs/4JJjaI897W1fI+wsCeY6fWv3AzZ5AbocNTFB/"
    "v5MBfBkrMamDf07gVTey/"
    "q0oXmaFNnTbSjoB+pmotoWWT5b9a7iJDp2vzoHTDNZ2PuBw5nl+iDVSFk4qLA4n4OdzWbFoH7TKZUqMLvnn2Z "
    "bob@desk";
const std::string kEcdsa =
    "ecdsa-sha2-nistp256 "
    "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBNAJfagGeQwCpkCd1u1aA4skF3kM/"
    "2jwWvORPI/gznO2Q23DCuigLKbL0OomhYw0MeE+RClxi+QSXpR1xJ2Px/A= carol";
const std::string kEd25519Blob =
    "AAAAC3NzaC1lZDI1NTE5AAAAIJqg2qFNXiCtrSZGMJZEv0uFtJQZkLrZZA9IVed3OCxC";

// The base takes lines 1-2; `extra` starts on line 3.
LoadResult with(const std::string& extra) {
  return load("image: debian-12\nnetwork: {mode: nat}\n" + extra);
}

// firmware

TEST(Firmware, UefiWithSecureBootAndPersistentNvram) {
  const auto r = with("firmware: {bootloader: uefi, secureBoot: true, efiPersistent: true}\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->firmware.bootloader, Bootloader::Uefi);
  EXPECT_TRUE(r.spec->firmware.secure_boot);
  EXPECT_TRUE(r.spec->firmware.efi_persistent);
}

TEST(Firmware, DefaultsLeaveThePreferenceInCharge) {
  const auto r = with("");
  ASSERT_TRUE(Valid(r));
  EXPECT_FALSE(r.spec->firmware.bootloader);
  EXPECT_FALSE(r.spec->firmware.secure_boot);
  EXPECT_FALSE(r.spec->firmware.efi_persistent);
  EXPECT_TRUE(Valid(with("firmware: {bootloader: bios, secureBoot: false}\n")));
}

TEST(Firmware, SecureBootWithExplicitBios) {
  const auto r = with("firmware:\n  bootloader: bios\n  secureBoot: true\n  efiPersistent: true\n");
  ASSERT_TRUE(ErrorCount(r, 2));
  EXPECT_TRUE(HasError(r, "firmware.secureBoot", 5, 15,
                       "Secure Boot needs bootloader: uefi (the bootloader is bios)"));
  EXPECT_TRUE(HasError(r, "firmware.efiPersistent", 6, 18,
                       "persistent EFI NVRAM needs bootloader: uefi (the bootloader is bios)"));
}

TEST(Firmware, SecureBootWithTheDefaultBios) {
  const auto r = with("firmware: {secureBoot: true}\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(
      r, "firmware.secureBoot", 3, 24,
      "Secure Boot needs bootloader: uefi (the default preference \"ubuntu\" boots with bios)"));
}

TEST(Firmware, SecureBootViaABiosPreference) {
  const auto r = with("instanceProfile: alpine\nfirmware: {secureBoot: true}\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(
      HasError(r, "firmware.secureBoot", 4, 24,
               "Secure Boot needs bootloader: uefi (preference \"alpine\" boots with bios)"));
}

TEST(Firmware, SecureBootViaAUefiPreferenceIsFine) {
  EXPECT_TRUE(
      Valid(with("instanceProfile: windows.11\nmemory: 4G\ncpus: 2\n"
                 "firmware: {secureBoot: true, efiPersistent: true}\n")));
  EXPECT_TRUE(Valid(with("instanceProfile: fedora\nmemory: 2G\nfirmware: {secureBoot: true}\n")));
  EXPECT_TRUE(Valid(with("instanceProfile: debian\nfirmware: {efiPersistent: true}\n")));
}

TEST(Firmware, ExplicitBiosOverridesAUefiPreference) {
  const auto r = with(
      "instanceProfile: windows.11\nmemory: 4G\ncpus: 2\n"
      "firmware: {bootloader: bios, secureBoot: true}\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "firmware.secureBoot", 6, 42, "(the bootloader is bios)"));
}

TEST(Firmware, InvalidBootloaderIsOneErrorNotTwo) {
  const auto r = with("firmware: {bootloader: efi, secureBoot: true}\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "firmware.bootloader", 3, 24, "\"efi\" is not one of uefi, bios"));
}

TEST(Firmware, TemplatedBootloaderOrPreferenceWaitsForValues) {
  EXPECT_TRUE(Valid(with("firmware: {bootloader: '${{ .var.boot }}', secureBoot: true}\n")));
  EXPECT_TRUE(Valid(with("instanceProfile: ${{ .var.os }}\nfirmware: {secureBoot: true}\n")));
  const auto r = load(
      "image: debian-12\nnetwork: {mode: nat}\n"
      "firmware: {bootloader: '${{ .var.boot }}', secureBoot: true}\n",
      Variables{{"user.username", "a"}, {"space.name", "b"}, {"var.boot", "bios"}});
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "firmware.secureBoot", 3, 56, "(the bootloader is bios)"));
}

TEST(Firmware, UnknownPreferenceIsOneErrorNotTwo) {
  const auto r = with("instanceProfile: windows.12\nfirmware: {secureBoot: true}\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "instanceProfile", 3, 18, "unknown preference \"windows.12\""));
}

TEST(Firmware, BooleansAreStrict) {
  auto r = with("firmware: {secureBoot: yes}\n");
  EXPECT_TRUE(HasError(r, "firmware.secureBoot", 3, 24, "expected true or false, got \"yes\""));
  r = with("firmware: {efiPersistent: 'true'}\n");
  EXPECT_TRUE(HasError(r, "firmware.efiPersistent", 3, 27,
                       "expected true or false, got the string \"true\""));
  r = with("firmware: uefi\n");
  EXPECT_TRUE(HasError(r, "firmware", 3, 11, "expected a mapping, got a single value"));
}

// cpuModel

TEST(CpuModel, Names) {
  for (const char* m : {"host-model", "host-passthrough", "Skylake-Server", "EPYC-Rome_v2.1"}) {
    SCOPED_TRACE(m);
    const auto r = with(std::string("cpuModel: ") + m + "\n");
    ASSERT_TRUE(Valid(r));
    EXPECT_EQ(r.spec->cpu_model, m);
  }
  EXPECT_TRUE(HasError(with("cpuModel: 'Skylake Server'\n"), "cpuModel", 3, 11,
                       "\"Skylake Server\" is not a CPU model name"));
  // Cozystack's default, "": the hypervisor's own model.
  const auto blank = with("cpuModel: ''\n");
  ASSERT_TRUE(Valid(blank));
  EXPECT_FALSE(blank.spec->cpu_model);
  EXPECT_TRUE(HasError(with("cpuModel: " + std::string(65, 'x') + "\n"), "cpuModel", 3, 11,
                       "cpuModel is longer than 64 characters"));
}

// gpus, disks, networks, subnets

TEST(Gpus, Names) {
  const auto r = with("gpus:\n  - name: nvidia.com/GA102GL_A10\n  - name: pci_0000_65_00_0\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->gpus, (std::vector<std::string>{"nvidia.com/GA102GL_A10", "pci_0000_65_00_0"}));
}

TEST(Gpus, Errors) {
  const auto r = with(R"(gpus:
  - name: "nvidia.com/A 10"
  - {}
  - name: a
  - name: a
  - nvidia.com/A10
)");
  ASSERT_TRUE(ErrorCount(r, 4));
  EXPECT_TRUE(HasError(r, "gpus[0].name", 4, 11, "\"nvidia.com/A 10\" is not a GPU resource name"));
  EXPECT_TRUE(HasError(r, "gpus[1].name", 5, 5, "name must be set"));
  EXPECT_TRUE(HasError(r, "gpus[3].name", 7, 11, "\"a\" is listed twice"));
  EXPECT_TRUE(HasError(r, "gpus[4]", 8, 5, "expected a mapping, got a single value"));
  EXPECT_TRUE(HasError(with("gpus: {name: a}\n"), "gpus", 3, 7, "expected a list, got a mapping"));
}

// Cozystack's values boot from disks[0] and have no image.
TEST(Disks, WithoutImageTheSpaceBootsFromDisks0) {
  const auto r = load("network: {mode: nat}\ndisks:\n  - name: root\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_TRUE(spec::boots_from_disk(*r.spec));
  EXPECT_FALSE(spec::boots_from_disk(*with("disks: [{name: root}]\n").spec));  // image: debian-12
  const auto none = load("network: {mode: nat}\n");
  EXPECT_TRUE(HasError(none, "image", 1, 1, "or leave it out and boot from disks[0]"));
  const auto sized = load("network: {mode: nat}\ndisk: 10Gi\ndisks: [{name: root}]\n");
  EXPECT_TRUE(HasError(sized, "disk", 2, 1, "without image the space boots from disks[0]"));
}

TEST(Disks, NamesAndBuses) {
  const auto r = with("disks:\n  - name: system\n  - {name: data-1, bus: sata}\n");
  ASSERT_TRUE(Valid(r));
  ASSERT_EQ(r.spec->disks.size(), 2u);
  EXPECT_EQ(r.spec->disks[0].name, "system");
  EXPECT_FALSE(r.spec->disks[0].bus);
  EXPECT_EQ(r.spec->disks[1].bus, "sata");
}

TEST(Disks, Errors) {
  const auto r = with(R"(disks:
  - name: System
  - name: -data
  - name: data
    bus: ide
  - bus: virtio
)");
  ASSERT_TRUE(ErrorCount(r, 4));
  EXPECT_TRUE(
      HasError(r, "disks[0].name", 4, 11, "\"System\" must be lowercase letters, digits and '-'"));
  EXPECT_TRUE(HasError(r, "disks[1].name", 5, 11, "\"-data\" must not start or end with '-'"));
  EXPECT_TRUE(HasError(r, "disks[2].bus", 7, 10, "\"ide\" is not one of virtio, sata, scsi, usb"));
  EXPECT_TRUE(HasError(r, "disks[3].name", 8, 5, "name must be set"));
  EXPECT_TRUE(HasError(with("disks: [{name: " + std::string(64, 'd') + "}]\n"), "disks[0].name", 3,
                       16, "is longer than 63 characters"));
}

TEST(Networks, Names) {
  const auto r = with("networks: [{name: vlan-10}, {name: storage}]\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->networks, (std::vector<std::string>{"vlan-10", "storage"}));
  EXPECT_TRUE(HasError(with("networks: [{name: Vlan_10}]\n"), "networks[0].name", 3, 19,
                       "\"Vlan_10\" must be lowercase letters, digits and '-'"));
}

TEST(Subnets, DeprecatedButFoldedIntoNetworks) {
  const auto r = with("subnets:\n  - name: vlan-10\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_TRUE(HasWarning(r, "subnets", 4, 3, "deprecated: rename it to networks"));
  EXPECT_EQ(r.spec->networks, (std::vector<std::string>{"vlan-10"}));
}

TEST(Subnets, IgnoredWhenNetworksIsSet) {
  const auto r = with("networks: [{name: a}]\nsubnets: [{name: b}]\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_TRUE(HasWarning(r, "subnets", 4, 10, "deprecated and ignored because networks is set"));
  EXPECT_EQ(r.spec->networks, (std::vector<std::string>{"a"}));
}

TEST(Subnets, EntriesAreStillChecked) {
  const auto r = with("subnets: [{name: B_2}]\n");
  EXPECT_TRUE(HasError(r, "subnets[0].name", 3, 18, "must be lowercase letters"));
}

// sshKeys

TEST(SshKeys, ValidKeys) {
  const auto r =
      with("sshKeys:\n  - " + kEd25519 + "\n  - " + kRsa + "\n  - " + kEcdsa +
           "\n  - 'no-pty,no-port-forwarding " + kEd25519 + "'\n  - \"  " + kEd25519 + "  \"\n");
  ASSERT_TRUE(Valid(r));
  ASSERT_EQ(r.spec->ssh_keys.size(), 5u);
  EXPECT_EQ(r.spec->ssh_keys[0], kEd25519);
  EXPECT_EQ(r.spec->ssh_keys[1], kRsa);
  EXPECT_EQ(r.spec->ssh_keys[4], kEd25519);
  EXPECT_EQ(check_ssh_public_key("ssh-ed25519 " + kEd25519Blob), "");
}

TEST(SshKeys, InvalidBase64) {
  for (const std::string& blob : {std::string("AAAA!!!!"), std::string("AAAAC3Nz"),
                                  kEd25519Blob.substr(0, kEd25519Blob.size() - 1)}) {
    SCOPED_TRACE(blob);
    const auto r = with("sshKeys: ['ssh-ed25519 " + blob + " x']\n");
    ASSERT_TRUE(ErrorCount(r, 1));
    EXPECT_EQ(test::at_path(r, "sshKeys[0]").size(), 1u) << test::describe(r);
  }
  EXPECT_TRUE(HasError(with("sshKeys: ['ssh-ed25519 AAAA!!!! x']\n"), "sshKeys[0]", 3, 11,
                       "the key's base64 part does not decode"));
  EXPECT_TRUE(HasError(with("sshKeys: ['ssh-ed25519 AAAAC3N x']\n"), "sshKeys[0]", 3, 11,
                       "the key's base64 part does not decode"));
}

TEST(SshKeys, TypeMismatch) {
  const auto r = with("sshKeys:\n  - ssh-rsa " + kEd25519Blob + " alice\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "sshKeys[0]", 4, 5,
                       "the key's data does not match its type ssh-rsa (truncated or pasted "
                       "wrongly?)"));
}

TEST(SshKeys, TruncatedBlob) {
  const auto r = with("sshKeys:\n  - ssh-ed25519 " + kEd25519Blob.substr(0, 16) + "\n");
  EXPECT_TRUE(HasError(r, "sshKeys[0]", 4, 5, "does not match its type ssh-ed25519"));
}

// A template's key may carry an options field; an account's key (the API's check) may not.
TEST(SshKeys, OptionsOnlyWhereAllowed) {
  const std::string with_options = "from=\"10.0.0.0/8\",no-pty ssh-ed25519 " + kEd25519Blob;
  EXPECT_EQ(check_ssh_public_key(with_options), "");
  EXPECT_NE(check_ssh_public_key(with_options, /*allow_options=*/false), "");
  EXPECT_EQ(check_ssh_public_key("ssh-ed25519 " + kEd25519Blob + " me", false), "");
}

TEST(SshKeys, NotAKey) {
  for (const char* k : {"hello", "ssh-ed25519", "ssh-ed2559 AAAA", "AAAAC3NzaC1lZDI1NTE5 x"}) {
    SCOPED_TRACE(k);
    const auto r = with(std::string("sshKeys: ['") + k + "']\n");
    EXPECT_TRUE(HasError(r, "sshKeys[0]", 3, 11, "not an OpenSSH public key"));
  }
  EXPECT_TRUE(HasError(with("sshKeys: [\"" + kEd25519 + "\\n" + kRsa + "\"]\n"), "sshKeys[0]", 3,
                       11, "an SSH key must be one line"));
  EXPECT_TRUE(HasError(with("sshKeys: " + kEd25519 + "\n"), "sshKeys", 3, 10,
                       "expected a list, got a single value"));
}

// cloudInit

TEST(CloudInit, CloudConfigMustParse) {
  const auto ok = with("cloudInit: |\n  #cloud-config\n  packages: [git]\n");
  ASSERT_TRUE(Valid(ok));
  EXPECT_EQ(ok.spec->cloud_init, "#cloud-config\npackages: [git]\n");
  const auto r = with(R"(cloudInit: |
  #cloud-config
  users:
    - name: a
   bad: [
)");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "cloudInit", 3, 12,
                       "#cloud-config is not valid YAML at its line 4 (file line 7): "));
}

TEST(CloudInit, ErrorLineInAQuotedScalarIsNotMappedToTheFile) {
  const auto r = with("cloudInit: \"#cloud-config\\nruncmd: [\"\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  const auto found = test::at_path(r, "cloudInit");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].line, 3);
  EXPECT_EQ(found[0].column, 12);
  EXPECT_THAT(found[0].message,
              ::testing::StartsWith("#cloud-config is not valid YAML at its line"));
  EXPECT_EQ(found[0].message.find("file line"), std::string::npos);
}

TEST(CloudInit, CloudConfigMustBeAMapping) {
  const auto r = with("cloudInit: |\n  #cloud-config\n  - a\n  - b\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "cloudInit", 3, 12, "#cloud-config must be a YAML mapping"));
  EXPECT_TRUE(Valid(with("cloudInit: '#cloud-config'\n")));
}

TEST(CloudInit, StrayCommaIsAnErrorNotSilentlyNull) {
  // yaml-cpp's Load returns null for this, and LoadAll never returns.
  const auto r = with("cloudInit: |\n  #cloud-config\n  , runcmd: [reboot]\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "cloudInit", 3, 12,
                       "#cloud-config is not valid YAML at its line 2: unexpected ','"));
}

TEST(CloudInit, OneDocumentOnly) {
  const auto r = with("cloudInit: |\n  #cloud-config\n  a: 1\n  ---\n  b: 2\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "cloudInit", 3, 12,
                       "#cloud-config holds a second YAML document (after ---) at its line 4; "
                       "cloud-init reads only one"));
  EXPECT_TRUE(Valid(with("cloudInit: |\n  #cloud-config\n  a: 1\n  ---\n")));
}

TEST(CloudInit, ScriptsAndMimeAreAccepted) {
  EXPECT_TRUE(Valid(with("cloudInit: |\n  #!/bin/sh\n  echo hi: [\n")));
  const auto r = with("cloudInit: \"Content-Type: multipart/mixed\"\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_TRUE(r.diagnostics.items().empty());
}

TEST(CloudInit, AnythingElseIsAWarning) {
  const auto r = with("cloudInit: |\n  packages: [git]\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_TRUE(HasWarning(r, "cloudInit", 3, 12,
                         "neither #cloud-config, a #! script nor MIME: cloud-init will ignore it"));
}

TEST(CloudInit, TemplatedIsCheckedRawWithoutValuesAndExpandedWithValues) {
  const std::string text =
      "image: debian-12\nnetwork: {mode: nat}\ncloudInit: |\n"
      "  #cloud-config\n  fqdn: ${{ .var.host }}.example.com\n";
  EXPECT_TRUE(Valid(load(text)));
  const auto ok =
      load(text, Variables{{"user.username", "a"}, {"space.name", "b"}, {"var.host", "dev"}});
  ASSERT_TRUE(Valid(ok));
  EXPECT_EQ(ok.spec->cloud_init, "#cloud-config\nfqdn: dev.example.com\n");
  // A value that would change the cloud-config's structure is reported, not applied.
  const auto bad =
      load(text, Variables{{"user.username", "a"}, {"space.name", "b"}, {"var.host", "x: [a: b"}});
  ASSERT_TRUE(ErrorCount(bad, 1));
  EXPECT_TRUE(HasError(bad, "cloudInit", 3, 12, "#cloud-config is not valid YAML"));
  const auto raw_bad = load(
      "image: debian-12\nnetwork: {mode: nat}\ncloudInit: |\n"
      "  #cloud-config\n  a: ${{ .space.name }}: [\n");
  EXPECT_TRUE(HasError(raw_bad, "cloudInit", 3, 12, "#cloud-config is not valid YAML"));
}

TEST(CloudInit, AValueWithALineBreakIsRefusedUnlessQuoted) {
  // Valid YAML either way, so only the line break tells the injected runcmd from data.
  const Variables values{
      {"user.username", "a"}, {"space.name", "b"}, {"var.host", "x\nruncmd: [reboot]"}};
  const auto bad = load(
      "image: debian-12\nnetwork: {mode: nat}\ncloudInit: |\n"
      "  #cloud-config\n  fqdn: ${{ .var.host }}\n",
      values);
  ASSERT_TRUE(ErrorCount(bad, 1));
  EXPECT_TRUE(HasError(bad, "cloudInit", 5, 9, "this value holds a line break"));
  EXPECT_TRUE(HasError(load("image: debian-12\nnetwork: {mode: nat}\n"
                            "cloudInit: \"#!/bin/sh\\necho ${{ .var.x }}\"\n",
                            Variables{{"var.x", "a\rreboot"}}),
                       "cloudInit", 3, 29, "pipe it through quote"));
  // The separators YAML 1.1 (cloud-init's PyYAML) breaks lines at, and other control characters.
  for (const char* v :
       {"x\u2028runcmd: [reboot]", "x\u0085runcmd: [reboot]", "x\u2029y", "x\x01y"}) {
    SCOPED_TRACE(v);
    EXPECT_TRUE(
        HasError(load("image: debian-12\nnetwork: {mode: nat}\ncloudInit: |\n"
                      "  #cloud-config\n  fqdn: ${{ .var.host }}\n",
                      Variables{{"user.username", "a"}, {"space.name", "b"}, {"var.host", v}}),
                 "cloudInit", 5, 9, "line break or control character"));
  }
  const auto quoted = load(
      "image: debian-12\nnetwork: {mode: nat}\ncloudInit: |\n"
      "  #cloud-config\n  fqdn: ${{ .var.host | quote }}\n",
      values);
  ASSERT_TRUE(Valid(quoted));
  EXPECT_EQ(quoted.spec->cloud_init, "#cloud-config\nfqdn: \"x\\nruncmd: [reboot]\"\n");
  // Elsewhere a line break is the field's own business (a hostname refuses it, an environment
  // value keeps it).
  EXPECT_TRUE(Valid(load(
      "image: debian-12\nnetwork: {mode: nat}\nenvironment: ['A=${{ .var.host }}']\n", values)));
}

TEST(CloudInit, NotAString) {
  EXPECT_TRUE(HasError(with("cloudInit: {packages: [git]}\n"), "cloudInit", 3, 12,
                       "expected a single value, got a mapping"));
}

// netplanDhcp, cloudInitSeed

TEST(NetplanDhcp, FineWithNat) {
  const auto r = with("netplanDhcp: true\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_TRUE(r.spec->netplan_dhcp);
}

TEST(NetplanDhcp, AnErrorWithBridgedStaticAddressing) {
  const auto r = load("image: debian-12\nnetwork: {cidr: 198.51.100.0/24}\nnetplanDhcp: true\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "netplanDhcp", 3, 14,
                       "DHCP on every interface would shadow the static address of bridged mode"));
  EXPECT_TRUE(
      Valid(load("image: debian-12\nnetwork: {cidr: 198.51.100.0/24}\nnetplanDhcp: false\n")));
}

TEST(NetplanDhcp, Boolean) {
  EXPECT_TRUE(HasError(with("netplanDhcp: on\n"), "netplanDhcp", 3, 14,
                       "expected true or false, got \"on\""));
}

TEST(CloudInitSeed, KeptAsText) {
  const auto r = with("cloudInitSeed: abc-123\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->cloud_init_seed, "abc-123");
}

// runStrategy and external access

TEST(RunStrategy, EveryValue) {
  const std::pair<const char*, RunStrategy> cases[] = {
      {"Always", RunStrategy::Always},
      {"Halted", RunStrategy::Halted},
      {"Manual", RunStrategy::Manual},
      {"RerunOnFailure", RunStrategy::RerunOnFailure},
      {"Once", RunStrategy::Once}};
  for (auto [text, value] : cases) {
    SCOPED_TRACE(text);
    const auto r = with(std::string("runStrategy: ") + text + "\n");
    ASSERT_TRUE(Valid(r));
    EXPECT_EQ(r.spec->run_strategy, value);
    EXPECT_STREQ(to_string(value), text);
  }
  EXPECT_EQ(with("").spec->run_strategy, RunStrategy::Always);
}

TEST(RunStrategy, Unknown) {
  EXPECT_TRUE(HasError(with("runStrategy: always\n"), "runStrategy", 3, 14,
                       "\"always\" is not one of Always, Halted, Manual, RerunOnFailure, Once "
                       "(did you mean Always?)"));
  EXPECT_TRUE(HasError(with("runStrategy: Forever\n"), "runStrategy", 3, 14,
                       "\"Forever\" is not one of Always, Halted, Manual, RerunOnFailure, Once"));
}

// Suites named so that `ctest -R suspend` runs them with the engine's.
TEST(suspend_spec, IdleSuspendTakesADurationOrOffAndDefaultsToTheServers) {
  EXPECT_FALSE(with("").spec->idle_suspend);
  auto r = with("idleSuspend: 30m\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(*r.spec->idle_suspend, std::chrono::minutes(30));
  r = with("idleSuspend: \"off\"\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->idle_suspend->count(), 0);
  EXPECT_TRUE(HasError(with("idleSuspend: 5s\n"), "idleSuspend", 3, 14,
                       "\"5s\" is not a duration of 10s or more (like 30m or 2h) or off"));
  EXPECT_TRUE(HasError(with("idleSuspend: soon\n"), "idleSuspend", 3, 14,
                       "\"soon\" is not a duration of 10s or more (like 30m or 2h) or off"));
}

TEST(External, Defaults) {
  const auto r = with("");
  ASSERT_TRUE(Valid(r));
  EXPECT_FALSE(r.spec->external);
  EXPECT_EQ(r.spec->external_method, ExternalMethod::PortList);
  EXPECT_EQ(r.spec->external_ports, (std::vector<std::uint16_t>{22}));
  EXPECT_TRUE(r.spec->external_allow_icmp);
}

// The base of with(), bridged: WholeIP is a bridged space's own address.
LoadResult bridged_with(const std::string& extra) {
  return load("image: debian-12\nnetwork: {mode: bridged, bridge: br0, cidr: 198.51.100.0/24}\n" +
              extra);
}

TEST(External, Settings) {
  const auto r = bridged_with(
      "external: true\nexternalMethod: WholeIP\nexternalPorts: [1, 443, 65535]\n"
      "externalAllowICMP: false\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_TRUE(r.diagnostics.items().empty());
  EXPECT_TRUE(r.spec->external);
  EXPECT_EQ(r.spec->external_method, ExternalMethod::WholeIP);
  EXPECT_EQ(r.spec->external_ports, (std::vector<std::uint16_t>{1, 443, 65535}));
  EXPECT_FALSE(r.spec->external_allow_icmp);
}

// On libvirt a NAT space has no address of its own to give away (WholeIP), and a bridged one
// needs no ports published (PortList) except on KubeVirt.
TEST(External, WholeIpOnNatAndPortListOnBridgedAreWarningsNamingTheBackend) {
  auto r = with("external: true\nexternalMethod: WholeIP\n");
  ASSERT_TRUE(Valid(r)) << "valid for KubeVirt";
  ASSERT_EQ(r.diagnostics.items().size(), 1u);
  EXPECT_EQ(r.diagnostics.items()[0].severity, Severity::Warning);
  EXPECT_EQ(r.diagnostics.items()[0].path, "externalMethod");
  EXPECT_NE(r.diagnostics.items()[0].message.find("libvirt refuses this space"), std::string::npos);
  r = bridged_with("external: true\nexternalPorts: [22, 8080]\n");
  ASSERT_TRUE(Valid(r));
  ASSERT_EQ(r.diagnostics.items().size(), 1u);
  EXPECT_EQ(r.diagnostics.items()[0].severity, Severity::Warning);
  EXPECT_EQ(r.diagnostics.items()[0].path, "externalPorts");
  EXPECT_NE(r.diagnostics.items()[0].message.find("only by the KubeVirt backend"),
            std::string::npos);
  EXPECT_TRUE(with("external: true\nexternalPorts: [22, 8080]\n").diagnostics.items().empty())
      << "PortList on NAT: published on ports of the host";
}

TEST(External, MethodMustBeKnown) {
  EXPECT_TRUE(HasError(with("external: true\nexternalMethod: wholeip\n"), "externalMethod", 4, 17,
                       "\"wholeip\" is not one of PortList, WholeIP (did you mean WholeIP?)"));
}

TEST(External, PortBounds) {
  const auto r = with("external: true\nexternalPorts: [0, 65536, 22, 22, '80/tcp', -1]\n");
  ASSERT_TRUE(ErrorCount(r, 5));
  EXPECT_TRUE(HasError(r, "externalPorts[0]", 4, 17,
                       "0 is not allowed: expected a whole number from 1 to 65535"));
  EXPECT_TRUE(HasError(r, "externalPorts[1]", 4, 20, "\"65536\" is above 65535"));
  EXPECT_TRUE(HasError(r, "externalPorts[3]", 4, 31, "port 22 is listed twice"));
  EXPECT_TRUE(
      HasError(r, "externalPorts[4]", 4, 35, "\"80/tcp\" is not a whole number from 1 to 65535"));
  EXPECT_TRUE(HasError(r, "externalPorts[5]", 4, 45, "\"-1\" is negative"));
}

TEST(External, EmptyPortList) {
  const auto r = with("external: true\nexternalPorts: []\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_TRUE(r.spec->external_ports.empty());
}

TEST(External, SettingsWithoutExternalAreAWarning) {
  const auto r = with("externalPorts: [80]\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_TRUE(HasWarning(r, "external", 3, 16,
                         "external access settings have no effect while external is false"));
}

TEST(External, Booleans) {
  EXPECT_TRUE(
      HasError(with("external: 1\n"), "external", 3, 11, "expected true or false, got \"1\""));
  EXPECT_TRUE(HasError(with("externalAllowICMP: no\n"), "externalAllowICMP", 3, 20,
                       "expected true or false, got \"no\""));
}

// display and console

TEST(Switches, DefaultFalse) {
  const auto r = with("");
  ASSERT_TRUE(Valid(r));
  EXPECT_FALSE(r.spec->display);
  EXPECT_FALSE(r.spec->console);
}

TEST(Switches, TrueAndFalse) {
  for (const char* t : {"true", "True", "TRUE"}) {
    const auto r = with(std::string("display: ") + t + "\nconsole: " + t + "\n");
    ASSERT_TRUE(Valid(r));
    EXPECT_TRUE(r.spec->display);
    EXPECT_TRUE(r.spec->console);
  }
  const auto r = with("display: false\nconsole: False\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_FALSE(r.spec->display);
  EXPECT_FALSE(r.spec->console);
}

TEST(Switches, OnlyBooleans) {
  const auto r = with("display: yes\nconsole: \"true\"\n");
  ASSERT_TRUE(ErrorCount(r, 2));
  EXPECT_TRUE(HasError(r, "display", 3, 10, "expected true or false, got \"yes\""));
  EXPECT_TRUE(HasError(r, "console", 4, 10, "expected true or false, got the string \"true\""));
  EXPECT_TRUE(HasError(with("display: 1\n"), "display", 3, 10, "got \"1\""));
  EXPECT_TRUE(
      HasError(with("console: ${{ .var.c }}\n"), "console", 3, 10, "must be a literal value"));
}

}  // namespace
}  // namespace bowline::spec

namespace bowline::spec {
namespace {

// ports: what the tunnel may reach besides SSH.

TEST(Ports, NumbersAndNamedEntries) {
  const auto r = test::load(
      "image: debian-12\nnetwork: {mode: nat}\nports: [8000, {port: 3000, name: web}]\n");
  ASSERT_TRUE(test::Valid(r));
  EXPECT_EQ(r.spec->ports,
            (std::vector<ServicePort>{ServicePort{8000, ""}, ServicePort{3000, "web"}}));
}

TEST(Ports, BadEntriesAreErrorsAtTheirPlace) {
  const auto r = test::load(
      "image: debian-12\nnetwork: {mode: nat}\n"
      "ports: [0, 70000, 8000, 8000, {name: web}, {port: 81, name: Web_1}, {port: 82, proto: "
      "udp}]\n");
  EXPECT_TRUE(test::HasError(r, "ports[0]", 3, 9,
                             "0 is not allowed: expected a whole number from 1 to 65535"));
  EXPECT_TRUE(test::HasError(r, "ports[1]", 3, 12, "\"70000\" is above 65535"));
  EXPECT_TRUE(test::HasError(r, "ports[3]", 3, 25, "port 8000 is listed twice"));
  EXPECT_TRUE(test::HasError(r, "ports[4]", 3, 31,
                             "a port entry needs port: (e.g. {port: 3000, name: web})"));
  EXPECT_TRUE(test::HasError(r, "ports[5].name", 3, 61,
                             "\"Web_1\" must be lowercase letters, digits and '-'"));
  EXPECT_TRUE(test::HasError(r, "ports[6].proto", 3, 80, "unknown field"));
  EXPECT_TRUE(test::ErrorCount(r, 6));
}

// A preview URL is asked for per port: `http: true` (private) or `preview: private|team`.
TEST(Ports, PreviewMarks) {
  const auto r = test::load(
      "image: debian-12\nnetwork: {mode: nat}\n"
      "ports: [22000, {port: 8000, http: true}, {port: 3000, preview: team}, "
      "{port: 3001, http: true, preview: private}, {port: 3002, http: false}]\n");
  ASSERT_TRUE(test::Valid(r));
  ASSERT_EQ(r.spec->ports.size(), 5u);
  EXPECT_EQ(r.spec->ports[0].preview, Preview::None);
  EXPECT_EQ(r.spec->ports[1].preview, Preview::Private);
  EXPECT_EQ(r.spec->ports[2].preview, Preview::Team);
  EXPECT_EQ(r.spec->ports[3].preview, Preview::Private);
  EXPECT_EQ(r.spec->ports[4].preview, Preview::None);
}

TEST(Ports, BadPreviewMarksAreErrorsAtTheirPlace) {
  const auto r = test::load(
      "image: debian-12\nnetwork: {mode: nat}\n"
      "ports: [{port: 80, preview: public}, {port: 81, http: false, preview: team}, "
      "{port: 82, http: 1}]\n");
  EXPECT_TRUE(
      test::HasError(r, "ports[0].preview", 3, 29, "\"public\" is not one of private, team"));
  EXPECT_TRUE(test::HasError(r, "ports[1].http", 3, 55, "http: false contradicts preview: team"));
  EXPECT_TRUE(test::HasError(r, "ports[2].http", 3, 95, "expected true or false"));
  EXPECT_TRUE(test::ErrorCount(r, 3));
}

}  // namespace
}  // namespace bowline::spec
