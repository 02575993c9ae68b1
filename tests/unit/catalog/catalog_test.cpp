#include "catalog/catalog.hpp"

#include <gtest/gtest.h>

#include <charconv>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace bowline::catalog {
namespace {

constexpr std::uint64_t kMi = std::uint64_t{1024} * 1024;
constexpr std::uint64_t kGi = kMi * 1024;

// The instance types of Cozystack's published table (seed 003), in its order, with vCPUs and
// memory as written there.
struct Expected {
  std::string_view name;
  std::uint32_t vcpus;
  std::string_view memory;
};

const std::vector<Expected> kExpectedTypes = {
    {"cx1.2xlarge", 8, "16Gi"},     {"cx1.2xlarge1gi", 8, "16Gi"},  {"cx1.4xlarge", 16, "32Gi"},
    {"cx1.4xlarge1gi", 16, "32Gi"}, {"cx1.8xlarge", 32, "64Gi"},    {"cx1.8xlarge1gi", 32, "64Gi"},
    {"cx1.large", 2, "4Gi"},        {"cx1.large1gi", 2, "4Gi"},     {"cx1.medium", 1, "2Gi"},
    {"cx1.medium1gi", 1, "2Gi"},    {"cx1.xlarge", 4, "8Gi"},       {"cx1.xlarge1gi", 4, "8Gi"},
    {"d1.2xlarge", 8, "32Gi"},      {"d1.2xmedium", 2, "4Gi"},      {"d1.4xlarge", 16, "64Gi"},
    {"d1.8xlarge", 32, "128Gi"},    {"d1.large", 2, "8Gi"},         {"d1.medium", 1, "4Gi"},
    {"d1.micro", 1, "1Gi"},         {"d1.nano", 1, "512Mi"},        {"d1.small", 1, "2Gi"},
    {"d1.xlarge", 4, "16Gi"},       {"gn1.2xlarge", 8, "32Gi"},     {"gn1.4xlarge", 16, "64Gi"},
    {"gn1.8xlarge", 32, "128Gi"},   {"gn1.xlarge", 4, "16Gi"},      {"m1.2xlarge", 8, "64Gi"},
    {"m1.2xlarge1gi", 8, "64Gi"},   {"m1.4xlarge", 16, "128Gi"},    {"m1.4xlarge1gi", 16, "128Gi"},
    {"m1.8xlarge", 32, "256Gi"},    {"m1.8xlarge1gi", 32, "256Gi"}, {"m1.large", 2, "16Gi"},
    {"m1.large1gi", 2, "16Gi"},     {"m1.xlarge", 4, "32Gi"},       {"m1.xlarge1gi", 4, "32Gi"},
    {"n1.2xlarge", 16, "32Gi"},     {"n1.4xlarge", 32, "64Gi"},     {"n1.8xlarge", 64, "128Gi"},
    {"n1.large", 4, "8Gi"},         {"n1.medium", 4, "4Gi"},        {"n1.xlarge", 8, "16Gi"},
    {"o1.2xlarge", 8, "32Gi"},      {"o1.4xlarge", 16, "64Gi"},     {"o1.8xlarge", 32, "128Gi"},
    {"o1.large", 2, "8Gi"},         {"o1.medium", 1, "4Gi"},        {"o1.micro", 1, "1Gi"},
    {"o1.nano", 1, "512Mi"},        {"o1.small", 1, "2Gi"},         {"o1.xlarge", 4, "16Gi"},
    {"rt1.2xlarge", 8, "32Gi"},     {"rt1.4xlarge", 16, "64Gi"},    {"rt1.8xlarge", 32, "128Gi"},
    {"rt1.large", 2, "8Gi"},        {"rt1.medium", 1, "4Gi"},       {"rt1.micro", 1, "1Gi"},
    {"rt1.small", 1, "2Gi"},        {"rt1.xlarge", 4, "16Gi"},      {"u1.2xlarge", 8, "32Gi"},
    {"u1.2xmedium", 2, "4Gi"},      {"u1.4xlarge", 16, "64Gi"},     {"u1.8xlarge", 32, "128Gi"},
    {"u1.large", 2, "8Gi"},         {"u1.medium", 1, "4Gi"},        {"u1.micro", 1, "1Gi"},
    {"u1.nano", 1, "512Mi"},        {"u1.small", 1, "2Gi"},         {"u1.xlarge", 4, "16Gi"},
};

// The preferences of the published table (seed 003), in its order, with their guest OS.
const std::vector<std::pair<std::string_view, std::string_view>> kExpectedPreferences = {
    {"alpine", "Alpine"},
    {"centos.stream10", "CentOS Stream 10"},
    {"centos.stream10.desktop", "CentOS Stream 10"},
    {"centos.stream9", "CentOS Stream 9"},
    {"centos.stream9.desktop", "CentOS Stream 9"},
    {"centos.stream9.dpdk", "CentOS Stream 9"},
    {"cirros", "Cirros"},
    {"debian", "Debian"},
    {"fedora", "Fedora (amd64)"},
    {"fedora.arm64", "Fedora (arm64)"},
    {"fedora.s390x", "Fedora (s390x)"},
    {"legacy", "Legacy Guest"},
    {"linux", "Linux Guest"},
    {"linux.efi", "Linux EFI Guest"},
    {"linux.virtiotransitional", "Linux Virtio Transitional Guest"},
    {"opensuse.leap", "OpenSUSE Leap"},
    {"opensuse.tumbleweed", "OpenSUSE Tumbleweed"},
    {"oraclelinux", "Oracle Linux"},
    {"rhel.10", "Red Hat Enterprise Linux 10 (amd64)"},
    {"rhel.10.arm64", "Red Hat Enterprise Linux 10 (arm64)"},
    {"rhel.10.s390x", "Red Hat Enterprise Linux 10 (s390x)"},
    {"rhel.7", "Red Hat Enterprise Linux 7"},
    {"rhel.7.desktop", "Red Hat Enterprise Linux 7"},
    {"rhel.8", "Red Hat Enterprise Linux 8"},
    {"rhel.8.desktop", "Red Hat Enterprise Linux 8"},
    {"rhel.8.dpdk", "Red Hat Enterprise Linux 8"},
    {"rhel.9", "Red Hat Enterprise Linux 9 (amd64)"},
    {"rhel.9.arm64", "Red Hat Enterprise Linux 9 (arm64)"},
    {"rhel.9.desktop", "Red Hat Enterprise Linux 9 Desktop (amd64)"},
    {"rhel.9.dpdk", "Red Hat Enterprise Linux 9 DPDK (amd64)"},
    {"rhel.9.realtime", "Red Hat Enterprise Linux 9 Realtime (amd64)"},
    {"rhel.9.s390x", "Red Hat Enterprise Linux 9 (s390x)"},
    {"sles", "SUSE Linux Enterprise Server"},
    {"ubuntu", "Ubuntu"},
    {"windows.10", "Microsoft Windows 10"},
    {"windows.10.virtio", "Microsoft Windows 10 (virtio)"},
    {"windows.11", "Microsoft Windows 11"},
    {"windows.11.virtio", "Microsoft Windows 11 (virtio)"},
    {"windows.2k12", "Microsoft Windows Server 2012/2012 R2"},
    {"windows.2k12.virtio", "Microsoft Windows Server 2012/2012 R2 (virtio)"},
    {"windows.2k16", "Microsoft Windows Server 2016"},
    {"windows.2k16.virtio", "Microsoft Windows Server 2016 (virtio)"},
    {"windows.2k19", "Microsoft Windows Server 2019"},
    {"windows.2k19.virtio", "Microsoft Windows Server 2019 (virtio)"},
    {"windows.2k22", "Microsoft Windows Server 2022"},
    {"windows.2k22.virtio", "Microsoft Windows Server 2022 (virtio)"},
    {"windows.2k25", "Microsoft Windows Server 2025"},
    {"windows.2k25.virtio", "Microsoft Windows Server 2025 (virtio)"},
    {"windows.2k3", "Microsoft Windows Server 2003"},
    {"windows.2k8", "Microsoft Windows Server 2008/2008 R2"},
    {"windows.2k8.virtio", "Microsoft Windows Server 2008/2008 R2 (virtio)"},
    {"windows.7", "Microsoft Windows 7"},
    {"windows.7.virtio", "Microsoft Windows 7 (virtio)"},
    {"windows.xp", "Microsoft Windows XP"},
};

// Kept by Cozystack on top of the published table, marked deprecated.
const std::vector<std::string_view> kDeprecatedPreferences = {
    "centos.7", "centos.7.desktop", "centos.stream8", "centos.stream8.desktop",
    "centos.stream8.dpdk"};

// "512Mi" / "4Gi" to bytes; nullopt for anything else.
std::optional<std::uint64_t> parse_memory(std::string_view text) {
  if (text.size() < 3) return std::nullopt;
  const std::string_view unit = text.substr(text.size() - 2);
  const std::string_view digits = text.substr(0, text.size() - 2);
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc{} || end != digits.data() + digits.size() || n == 0) return std::nullopt;
  if (unit == "Mi") return n * kMi;
  if (unit == "Gi") return n * kGi;
  return std::nullopt;
}

std::string_view series_of(std::string_view name) {
  return name.substr(0, name.find('.'));
}

const InstanceType& type(std::string_view name) {
  const InstanceType* t = find_instance_type(name);
  EXPECT_NE(t, nullptr) << name;
  static const InstanceType kMissing;
  return t ? *t : kMissing;
}

const Preference& pref(std::string_view name) {
  const Preference* p = find_preference(name);
  EXPECT_NE(p, nullptr) << name;
  static const Preference kMissing;
  return p ? *p : kMissing;
}

// ---- instance types ----

TEST(InstanceTypes, MatchThePublishedTableInOrder) {
  const auto all = instance_types();
  ASSERT_EQ(all.size(), 69u);
  ASSERT_EQ(all.size(), kExpectedTypes.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    SCOPED_TRACE(kExpectedTypes[i].name);
    EXPECT_EQ(all[i].name, kExpectedTypes[i].name);
    EXPECT_EQ(all[i].vcpus, kExpectedTypes[i].vcpus);
    EXPECT_EQ(all[i].memory_text, kExpectedTypes[i].memory);
  }
}

TEST(InstanceTypes, NamesAreUnique) {
  std::set<std::string_view> seen;
  for (const auto& t : instance_types()) EXPECT_TRUE(seen.insert(t.name).second) << t.name;
}

TEST(InstanceTypes, MemoryBytesAgreeWithText) {
  for (const auto& t : instance_types()) {
    SCOPED_TRACE(t.name);
    EXPECT_GT(t.vcpus, 0u);
    const auto parsed = parse_memory(t.memory_text);
    ASSERT_TRUE(parsed.has_value()) << t.memory_text;
    EXPECT_EQ(t.memory_bytes, *parsed);
  }
}

TEST(InstanceTypes, EveryTypeCarriesTheTraitsOfItsSeries) {
  for (const auto& t : instance_types()) {
    SCOPED_TRACE(t.name);
    ASSERT_NE(t.traits, nullptr);
    EXPECT_EQ(t.traits->series, series_of(t.name));
    EXPECT_FALSE(t.traits->class_name.empty());
    EXPECT_FALSE(t.traits->description.empty());
  }
}

TEST(InstanceTypes, SeriesCountsAreComplete) {
  std::map<std::string_view, int> counts;
  for (const auto& t : instance_types()) ++counts[series_of(t.name)];
  const std::map<std::string_view, int> expected = {{"cx1", 12}, {"d1", 10}, {"gn1", 4},
                                                    {"m1", 10},  {"n1", 6},  {"o1", 9},
                                                    {"rt1", 8},  {"u1", 10}};
  EXPECT_EQ(counts, expected);
}

TEST(InstanceTypes, HugepagesFollowTheSeries) {
  for (const auto& t : instance_types()) {
    SCOPED_TRACE(t.name);
    const auto series = series_of(t.name);
    const bool one_gi_variant = t.name.ends_with("1gi");
    if (series == "cx1" || series == "m1") {
      EXPECT_EQ(t.hugepages_size, one_gi_variant ? "1Gi" : "2Mi");
    } else if (series == "n1" || series == "rt1") {
      EXPECT_EQ(t.hugepages_size, "1Gi");
    } else {
      EXPECT_EQ(t.hugepages_size, "");
    }
  }
}

TEST(InstanceTypes, OnlyGn1BringsAGpu) {
  for (const auto& t : instance_types()) {
    SCOPED_TRACE(t.name);
    if (series_of(t.name) == "gn1") {
      EXPECT_EQ(t.gpus, std::vector<std::string_view>{"nvidia.com/A400"});
      EXPECT_TRUE(t.traits->deprecated);
    } else {
      EXPECT_TRUE(t.gpus.empty());
      EXPECT_FALSE(t.traits->deprecated);
    }
  }
}

TEST(InstanceTypes, U1MediumIsTheSharedDefault) {
  const auto& t = type("u1.medium");
  EXPECT_EQ(t.vcpus, 1u);
  EXPECT_EQ(t.memory_bytes, 4 * kGi);
  EXPECT_EQ(t.memory_text, "4Gi");
  EXPECT_EQ(t.hugepages_size, "");
  ASSERT_NE(t.traits, nullptr);
  EXPECT_EQ(t.traits->class_name, "general.purpose");
  EXPECT_FALSE(t.traits->dedicated_cpu);
  EXPECT_EQ(t.traits->memory_overcommit_percent, 0u);
}

TEST(InstanceTypes, Cx1Large1giIsDedicatedOnGigabytePages) {
  const auto& t = type("cx1.large1gi");
  EXPECT_EQ(t.vcpus, 2u);
  EXPECT_EQ(t.memory_bytes, 4 * kGi);
  EXPECT_EQ(t.hugepages_size, "1Gi");
  ASSERT_NE(t.traits, nullptr);
  EXPECT_TRUE(t.traits->dedicated_cpu);
  EXPECT_TRUE(t.traits->isolate_emulator_thread);
  EXPECT_TRUE(t.traits->vnuma);
  EXPECT_FALSE(t.traits->realtime);
  EXPECT_EQ(type("cx1.large").hugepages_size, "2Mi");
}

TEST(InstanceTypes, O1OvercommitsMemoryByHalf) {
  for (const auto& t : instance_types()) {
    SCOPED_TRACE(t.name);
    EXPECT_EQ(t.traits->memory_overcommit_percent, series_of(t.name) == "o1" ? 50u : 0u);
  }
  EXPECT_EQ(type("o1.nano").memory_text, "512Mi");
  EXPECT_EQ(type("o1.nano").memory_bytes, 512 * kMi);
}

TEST(InstanceTypes, Rt1IsTheOnlyRealtimeSeries) {
  for (const auto& t : instance_types()) {
    SCOPED_TRACE(t.name);
    EXPECT_EQ(t.traits->realtime, series_of(t.name) == "rt1");
  }
  const auto& rt = type("rt1.medium");
  EXPECT_TRUE(rt.traits->dedicated_cpu);
  EXPECT_TRUE(rt.traits->isolate_emulator_thread);
  EXPECT_TRUE(rt.traits->vnuma);
  EXPECT_EQ(rt.hugepages_size, "1Gi");
}

TEST(InstanceTypes, SeriesTraitsSpotChecks) {
  EXPECT_TRUE(type("d1.small").traits->dedicated_cpu);
  EXPECT_TRUE(type("d1.small").traits->isolate_emulator_thread);
  EXPECT_FALSE(type("d1.small").traits->vnuma);
  EXPECT_TRUE(type("n1.medium").traits->dedicated_cpu);
  EXPECT_FALSE(type("n1.medium").traits->vnuma);
  EXPECT_EQ(type("n1.medium").vcpus, 4u);
  EXPECT_FALSE(type("m1.large").traits->dedicated_cpu);
  EXPECT_EQ(type("m1.8xlarge1gi").memory_bytes, 256 * kGi);
  EXPECT_EQ(type("gn1.xlarge").traits->class_name, "gpu.nvidia");
}

TEST(InstanceTypes, UnknownNamesAreNotFound) {
  EXPECT_EQ(find_instance_type(""), nullptr);
  EXPECT_EQ(find_instance_type("u1"), nullptr);
  EXPECT_EQ(find_instance_type("u1.mediums"), nullptr);
  EXPECT_EQ(find_instance_type("U1.medium"), nullptr);
  EXPECT_EQ(find_instance_type("u2.medium"), nullptr);
  EXPECT_EQ(find_instance_type("ubuntu"), nullptr);
  EXPECT_EQ(find_instance_type("cx1.nano"), nullptr);
}

// ---- preferences ----

TEST(Preferences, MatchThePublishedTableThenTheDeprecatedOnes) {
  const auto all = preferences();
  ASSERT_EQ(kExpectedPreferences.size(), 54u);
  ASSERT_EQ(all.size(), 59u);
  for (std::size_t i = 0; i < kExpectedPreferences.size(); ++i) {
    SCOPED_TRACE(kExpectedPreferences[i].first);
    EXPECT_EQ(all[i].name, kExpectedPreferences[i].first);
    EXPECT_EQ(all[i].guest_os, kExpectedPreferences[i].second);
    EXPECT_FALSE(all[i].deprecated);
  }
  for (std::size_t i = 0; i < kDeprecatedPreferences.size(); ++i) {
    const auto& p = all[kExpectedPreferences.size() + i];
    SCOPED_TRACE(kDeprecatedPreferences[i]);
    EXPECT_EQ(p.name, kDeprecatedPreferences[i]);
    EXPECT_TRUE(p.deprecated);
    EXPECT_FALSE(p.guest_os.empty());
  }
}

TEST(Preferences, NamesAreUnique) {
  std::set<std::string_view> seen;
  for (const auto& p : preferences()) EXPECT_TRUE(seen.insert(p.name).second) << p.name;
}

TEST(Preferences, FieldsHoldKnownValues) {
  const std::set<std::string_view> buses = {"virtio", "sata", "scsi"};
  const std::set<std::string_view> nics = {"virtio", "e1000", "e1000e", "rtl8139"};
  const std::set<std::string_view> arches = {"amd64", "arm64", "s390x"};
  for (const auto& p : preferences()) {
    SCOPED_TRACE(p.name);
    EXPECT_TRUE(buses.contains(p.disk_bus)) << p.disk_bus;
    EXPECT_TRUE(nics.contains(p.nic_model)) << p.nic_model;
    EXPECT_TRUE(arches.contains(p.architecture)) << p.architecture;
    // Secure Boot, SMM and persistent EFI only make sense on UEFI.
    if (p.secure_boot || p.efi_persistent) {
      EXPECT_EQ(p.firmware, Firmware::Uefi);
    }
    EXPECT_EQ(p.secure_boot, p.smm);
    EXPECT_EQ(p.efi_persistent, p.tpm_persistent);
  }
}

TEST(Preferences, UbuntuNeedsTwoGi) {
  const auto& p = pref("ubuntu");
  EXPECT_EQ(p.guest_os, "Ubuntu");
  EXPECT_EQ(p.min_vcpus, 1u);
  EXPECT_EQ(p.min_memory_bytes, 2 * kGi);
  EXPECT_EQ(p.firmware, Firmware::Bios);
  EXPECT_EQ(p.disk_bus, "virtio");
  EXPECT_EQ(p.nic_model, "virtio");
  // The default instance type satisfies the default preference; u1.micro does not.
  EXPECT_GE(type("u1.medium").memory_bytes, p.min_memory_bytes);
  EXPECT_GE(type("u1.small").memory_bytes, p.min_memory_bytes);
  EXPECT_LT(type("u1.micro").memory_bytes, p.min_memory_bytes);
}

TEST(Preferences, Windows11IsSecureBootWithPersistentState) {
  for (const auto name : {"windows.11", "windows.11.virtio"}) {
    SCOPED_TRACE(name);
    const auto& p = pref(name);
    EXPECT_EQ(p.firmware, Firmware::Uefi);
    EXPECT_TRUE(p.secure_boot);
    EXPECT_TRUE(p.smm);
    EXPECT_TRUE(p.efi_persistent);
    EXPECT_TRUE(p.tpm_persistent);
    EXPECT_EQ(p.min_vcpus, 2u);
    EXPECT_EQ(p.min_memory_bytes, 4 * kGi);
  }
  EXPECT_EQ(pref("windows.11").disk_bus, "sata");
  EXPECT_EQ(pref("windows.11").nic_model, "e1000e");
  EXPECT_EQ(pref("windows.11.virtio").disk_bus, "virtio");
  EXPECT_EQ(pref("windows.11.virtio").nic_model, "virtio");
}

TEST(Preferences, WindowsFirmwareAndPersistence) {
  const std::set<std::string_view> secure = {"10", "11", "2k16", "2k19", "2k22", "2k25"};
  const std::set<std::string_view> persistent = {"11", "2k22", "2k25"};
  int windows = 0;
  for (const auto& p : preferences()) {
    if (!p.name.starts_with("windows.")) continue;
    ++windows;
    SCOPED_TRACE(p.name);
    std::string_view version = p.name.substr(8);
    const bool virtio = version.ends_with(".virtio");
    if (virtio) version.remove_suffix(7);
    EXPECT_EQ(p.secure_boot, secure.contains(version));
    EXPECT_EQ(p.firmware, secure.contains(version) ? Firmware::Uefi : Firmware::Bios);
    EXPECT_EQ(p.efi_persistent, persistent.contains(version));
    EXPECT_GT(p.min_memory_bytes, 0u);
    if (virtio) {
      EXPECT_EQ(p.disk_bus, "virtio");
      EXPECT_EQ(p.nic_model, "virtio");
    } else {
      EXPECT_EQ(p.disk_bus, "sata");
      const std::string_view nic =
          version == "2k3" ? "rtl8139" : (version == "2k8" ? "e1000" : "e1000e");
      EXPECT_EQ(p.nic_model, nic);
    }
  }
  EXPECT_EQ(windows, 20);
  EXPECT_EQ(pref("windows.xp").min_memory_bytes, 128 * kMi);
  EXPECT_EQ(pref("windows.2k3").min_memory_bytes, 256 * kMi);
  EXPECT_EQ(pref("windows.2k12.virtio").min_memory_bytes, 512 * kMi);
  EXPECT_EQ(find_preference("windows.xp.virtio"), nullptr);
  EXPECT_EQ(find_preference("windows.2k3.virtio"), nullptr);
}

TEST(Preferences, LegacyUsesSataAndE1000) {
  const auto& p = pref("legacy");
  EXPECT_EQ(p.guest_os, "Legacy Guest");
  EXPECT_EQ(p.disk_bus, "sata");
  EXPECT_EQ(p.nic_model, "e1000");
  EXPECT_EQ(p.firmware, Firmware::Bios);
  EXPECT_EQ(p.min_vcpus, 0u);
  EXPECT_EQ(p.min_memory_bytes, 0u);
}

TEST(Preferences, OnlyLegacyAndWindowsLeaveVirtio) {
  for (const auto& p : preferences()) {
    if (p.name == "legacy" || p.name.starts_with("windows.")) continue;
    SCOPED_TRACE(p.name);
    EXPECT_EQ(p.disk_bus, "virtio");
    EXPECT_EQ(p.nic_model, "virtio");
  }
}

TEST(Preferences, LinuxFirmware) {
  for (const auto name : {"debian", "linux.efi", "oraclelinux"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(pref(name).firmware, Firmware::Uefi);
    EXPECT_FALSE(pref(name).secure_boot);
  }
  for (const auto name :
       {"fedora", "rhel.9", "rhel.9.desktop", "rhel.9.dpdk", "rhel.9.realtime", "rhel.10"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(pref(name).firmware, Firmware::Uefi);
    EXPECT_TRUE(pref(name).secure_boot);
    EXPECT_TRUE(pref(name).smm);
    EXPECT_FALSE(pref(name).efi_persistent);
  }
  for (const auto name : {"linux", "ubuntu", "alpine", "centos.stream9", "fedora.arm64"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(pref(name).firmware, Firmware::Bios);
  }
}

TEST(Preferences, ArchitectureVariants) {
  for (const auto& p : preferences()) {
    SCOPED_TRACE(p.name);
    if (p.name.ends_with(".arm64")) {
      EXPECT_EQ(p.architecture, "arm64");
    } else if (p.name.ends_with(".s390x")) {
      EXPECT_EQ(p.architecture, "s390x");
    } else {
      EXPECT_EQ(p.architecture, "amd64");
    }
  }
}

TEST(Preferences, StatedMinimums) {
  EXPECT_EQ(pref("alpine").min_memory_bytes, 512 * kMi);
  EXPECT_EQ(pref("cirros").min_memory_bytes, 256 * kMi);
  EXPECT_EQ(pref("rhel.8").min_memory_bytes, 1536 * kMi);
  EXPECT_EQ(pref("centos.stream10").min_memory_bytes, 1536 * kMi);
  EXPECT_EQ(pref("oraclelinux").min_vcpus, 2u);
  EXPECT_EQ(pref("oraclelinux").min_memory_bytes, 4 * kGi);
  EXPECT_EQ(pref("rhel.9.realtime").min_vcpus, 4u);
  EXPECT_EQ(pref("rhel.9.realtime").min_memory_bytes, 4 * kGi);
  for (const auto name : {"rhel.8.dpdk", "rhel.9.dpdk", "centos.stream9.dpdk"}) {
    EXPECT_EQ(pref(name).min_vcpus, 8u) << name;
  }
  for (const auto name : {"linux", "linux.efi", "linux.virtiotransitional", "legacy"}) {
    EXPECT_EQ(pref(name).min_vcpus, 0u) << name;
    EXPECT_EQ(pref(name).min_memory_bytes, 0u) << name;
  }
}

TEST(Preferences, UnknownNamesAreNotFound) {
  EXPECT_EQ(find_preference(""), nullptr);
  EXPECT_EQ(find_preference("Ubuntu"), nullptr);
  EXPECT_EQ(find_preference("ubuntu.arm64"), nullptr);
  EXPECT_EQ(find_preference("windows"), nullptr);
  EXPECT_EQ(find_preference("windows.12"), nullptr);
  EXPECT_EQ(find_preference("u1.medium"), nullptr);
  EXPECT_EQ(find_preference("centos.stream11"), nullptr);
}

TEST(Preferences, LookupReturnsTheTableEntry) {
  const auto all = preferences();
  for (const auto& p : all) EXPECT_EQ(find_preference(p.name), &p) << p.name;
  const auto types = instance_types();
  for (const auto& t : types) EXPECT_EQ(find_instance_type(t.name), &t) << t.name;
}

}  // namespace
}  // namespace bowline::catalog
