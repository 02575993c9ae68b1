// The preference catalog: every VirtualMachineClusterPreference Cozystack installs, in the order
// of its published table, followed by the end-of-life CentOS profiles it keeps for old VMs.
//
// Minimum requirements are filled in only where the research notes state them; elsewhere they
// stay 0 ("no requirement").
#include <cstdint>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"

namespace bowline::catalog {

namespace {

constexpr std::uint64_t kMi = std::uint64_t{1024} * 1024;
constexpr std::uint64_t kGi = kMi * 1024;

// Small builder so each table row reads as a list of what differs from the virtio/BIOS default.
class Pref {
 public:
  Pref(std::string_view name, std::string_view guest_os) {
    p_.name = name;
    p_.guest_os = guest_os;
  }

  // UEFI without Secure Boot.
  Pref& efi() {
    p_.firmware = Firmware::Uefi;
    return *this;
  }
  // UEFI with Secure Boot; Secure Boot needs SMM, so it comes along.
  Pref& secure_boot() {
    p_.firmware = Firmware::Uefi;
    p_.secure_boot = true;
    p_.smm = true;
    return *this;
  }
  // EFI variables and TPM state survive restarts.
  Pref& persistent() {
    p_.efi_persistent = true;
    p_.tpm_persistent = true;
    return *this;
  }
  Pref& devices(std::string_view disk_bus, std::string_view nic_model) {
    p_.disk_bus = disk_bus;
    p_.nic_model = nic_model;
    return *this;
  }
  Pref& arch(std::string_view architecture) {
    p_.architecture = architecture;
    return *this;
  }
  Pref& min(std::uint32_t vcpus, std::uint64_t memory_bytes) {
    p_.min_vcpus = vcpus;
    p_.min_memory_bytes = memory_bytes;
    return *this;
  }
  Pref& deprecated() {
    p_.deprecated = true;
    return *this;
  }

  operator Preference() const { return p_; }  // NOLINT(google-explicit-constructor)

 private:
  Preference p_;
};

const std::vector<Preference>& table() {
  static const std::vector<Preference> prefs = {
      Pref("alpine", "Alpine").min(0, 512 * kMi),
      Pref("centos.stream10", "CentOS Stream 10").min(0, 1536 * kMi),
      Pref("centos.stream10.desktop", "CentOS Stream 10"),
      Pref("centos.stream9", "CentOS Stream 9").min(0, 1536 * kMi),
      Pref("centos.stream9.desktop", "CentOS Stream 9"),
      Pref("centos.stream9.dpdk", "CentOS Stream 9").min(8, 0),
      Pref("cirros", "Cirros").min(0, 256 * kMi),
      Pref("debian", "Debian").efi().min(0, 512 * kMi),
      Pref("fedora", "Fedora (amd64)").secure_boot().arch("amd64").min(0, 2 * kGi),
      Pref("fedora.arm64", "Fedora (arm64)").arch("arm64"),
      Pref("fedora.s390x", "Fedora (s390x)").arch("s390x"),
      Pref("legacy", "Legacy Guest").devices("sata", "e1000"),
      Pref("linux", "Linux Guest"),
      Pref("linux.efi", "Linux EFI Guest").efi(),
      Pref("linux.virtiotransitional", "Linux Virtio Transitional Guest"),
      Pref("opensuse.leap", "OpenSUSE Leap").min(0, 2 * kGi),
      Pref("opensuse.tumbleweed", "OpenSUSE Tumbleweed").min(0, 2 * kGi),
      Pref("oraclelinux", "Oracle Linux").efi().min(2, 4 * kGi),
      Pref("rhel.10", "Red Hat Enterprise Linux 10 (amd64)").secure_boot().arch("amd64"),
      Pref("rhel.10.arm64", "Red Hat Enterprise Linux 10 (arm64)").arch("arm64"),
      Pref("rhel.10.s390x", "Red Hat Enterprise Linux 10 (s390x)").arch("s390x"),
      Pref("rhel.7", "Red Hat Enterprise Linux 7").min(0, 1 * kGi),
      Pref("rhel.7.desktop", "Red Hat Enterprise Linux 7"),
      Pref("rhel.8", "Red Hat Enterprise Linux 8").min(0, 1536 * kMi),
      Pref("rhel.8.desktop", "Red Hat Enterprise Linux 8"),
      Pref("rhel.8.dpdk", "Red Hat Enterprise Linux 8").min(8, 0),
      Pref("rhel.9", "Red Hat Enterprise Linux 9 (amd64)").secure_boot().arch("amd64"),
      Pref("rhel.9.arm64", "Red Hat Enterprise Linux 9 (arm64)").arch("arm64"),
      Pref("rhel.9.desktop", "Red Hat Enterprise Linux 9 Desktop (amd64)")
          .secure_boot()
          .arch("amd64"),
      Pref("rhel.9.dpdk", "Red Hat Enterprise Linux 9 DPDK (amd64)")
          .secure_boot()
          .arch("amd64")
          .min(8, 0),
      Pref("rhel.9.realtime", "Red Hat Enterprise Linux 9 Realtime (amd64)")
          .secure_boot()
          .arch("amd64")
          .min(4, 4 * kGi),
      Pref("rhel.9.s390x", "Red Hat Enterprise Linux 9 (s390x)").arch("s390x"),
      Pref("sles", "SUSE Linux Enterprise Server").min(0, 2 * kGi),
      Pref("ubuntu", "Ubuntu").min(1, 2 * kGi),

      // Windows: the plain variants emulate hardware the installer has drivers for; the
      // .virtio variants expect the virtio drivers to be loaded.
      Pref("windows.10", "Microsoft Windows 10")
          .devices("sata", "e1000e")
          .secure_boot()
          .min(0, 2 * kGi),
      Pref("windows.10.virtio", "Microsoft Windows 10 (virtio)").secure_boot().min(0, 2 * kGi),
      Pref("windows.11", "Microsoft Windows 11")
          .devices("sata", "e1000e")
          .secure_boot()
          .persistent()
          .min(2, 4 * kGi),
      Pref("windows.11.virtio", "Microsoft Windows 11 (virtio)")
          .secure_boot()
          .persistent()
          .min(2, 4 * kGi),
      Pref("windows.2k12", "Microsoft Windows Server 2012/2012 R2")
          .devices("sata", "e1000e")
          .min(0, 512 * kMi),
      Pref("windows.2k12.virtio", "Microsoft Windows Server 2012/2012 R2 (virtio)")
          .min(0, 512 * kMi),
      Pref("windows.2k16", "Microsoft Windows Server 2016")
          .devices("sata", "e1000e")
          .secure_boot()
          .min(0, 2 * kGi),
      Pref("windows.2k16.virtio", "Microsoft Windows Server 2016 (virtio)")
          .secure_boot()
          .min(0, 2 * kGi),
      Pref("windows.2k19", "Microsoft Windows Server 2019")
          .devices("sata", "e1000e")
          .secure_boot()
          .min(0, 2 * kGi),
      Pref("windows.2k19.virtio", "Microsoft Windows Server 2019 (virtio)")
          .secure_boot()
          .min(0, 2 * kGi),
      Pref("windows.2k22", "Microsoft Windows Server 2022")
          .devices("sata", "e1000e")
          .secure_boot()
          .persistent()
          .min(0, 2 * kGi),
      Pref("windows.2k22.virtio", "Microsoft Windows Server 2022 (virtio)")
          .secure_boot()
          .persistent()
          .min(0, 2 * kGi),
      Pref("windows.2k25", "Microsoft Windows Server 2025")
          .devices("sata", "e1000e")
          .secure_boot()
          .persistent()
          .min(0, 2 * kGi),
      Pref("windows.2k25.virtio", "Microsoft Windows Server 2025 (virtio)")
          .secure_boot()
          .persistent()
          .min(0, 2 * kGi),
      Pref("windows.2k3", "Microsoft Windows Server 2003")
          .devices("sata", "rtl8139")
          .min(0, 256 * kMi),
      Pref("windows.2k8", "Microsoft Windows Server 2008/2008 R2")
          .devices("sata", "e1000")
          .min(0, 512 * kMi),
      Pref("windows.2k8.virtio", "Microsoft Windows Server 2008/2008 R2 (virtio)")
          .min(0, 512 * kMi),
      Pref("windows.7", "Microsoft Windows 7").devices("sata", "e1000e").min(0, 2 * kGi),
      Pref("windows.7.virtio", "Microsoft Windows 7 (virtio)").min(0, 2 * kGi),
      Pref("windows.xp", "Microsoft Windows XP").devices("sata", "e1000e").min(0, 128 * kMi),

      // End-of-life profiles Cozystack still installs so VMs that name them keep rendering.
      Pref("centos.7", "CentOS 7").deprecated(),
      Pref("centos.7.desktop", "CentOS 7").deprecated(),
      Pref("centos.stream8", "CentOS Stream 8").deprecated(),
      Pref("centos.stream8.desktop", "CentOS Stream 8").deprecated(),
      Pref("centos.stream8.dpdk", "CentOS Stream 8").deprecated(),
  };
  return prefs;
}

}  // namespace

std::span<const Preference> preferences() {
  return table();
}

}  // namespace bowline::catalog
