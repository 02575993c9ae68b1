// Whether hardware KVM really runs guests on a node. /dev/kvm existing, and libvirt offering
// domain type kvm, prove nothing: on some hosts (nested virtualisation that the outer
// hypervisor provides only in part) QEMU aborts at the first vCPU ("failed to set MSR 0x10a"),
// or the vCPU runs the firmware happily and then stops at a guest's first protected-mode
// interrupt ("KVM internal error ... emulation failure"). Only booting something proves KVM, so
// the probe starts a throwaway transient domain of type kvm with the CPU bowline would use,
// boots bowline's own probe program from a small disk (engine/kvm_probe_guest.hpp) and waits
// for the program's last marker on the serial port, reporting how far it got and QEMU's own
// words when it does not get there.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "libvirt/hypervisor.hpp"
#include "plan/plan.hpp"

namespace bowline::engine {

struct KvmVerdict {
  bool usable = false;
  std::string detail;  // what happened: "a KVM guest ran for 1.0 s", or QEMU's message
  std::string fix;     // empty when usable
};

// The seam: the server and `node check` use LibvirtKvmProbe, unit tests a fake.
class KvmProbe {
 public:
  virtual ~KvmProbe() = default;
  virtual KvmVerdict probe() = 0;
};

struct KvmProbeOptions {
  std::string kvm_device = "/dev/kvm";
  // A directory QEMU can traverse (the node's images path) for the probe's boot disk and serial
  // log, in a subdirectory removed afterwards. Empty (or no probe program on this architecture):
  // the guest has no disk and only has to keep running for run_for, a weaker proof.
  std::string work_dir;
  // How long the probe program may take to print its last marker: under KVM it takes well under
  // a second, under software emulation a few.
  std::chrono::milliseconds boot_within{15000};
  // Without the program: how long the vCPU must keep running.
  std::chrono::milliseconds run_for{1000};
  // Where libvirt keeps each domain's QEMU log: QEMU's words when the vCPU stops.
  std::string qemu_log_dir = "/var/log/libvirt/qemu";
  // kvm; a test passes qemu to boot the probe program under software emulation.
  std::string domain_type = "kvm";
  // Sleeps between checks; tests pass one that does not wait.
  std::function<void(std::chrono::milliseconds)> sleep;
};

class LibvirtKvmProbe final : public KvmProbe {
 public:
  explicit LibvirtKvmProbe(libvirt::Hypervisor& hypervisor, KvmProbeOptions options = {});
  KvmVerdict probe() override;

 private:
  libvirt::Hypervisor& hypervisor_;
  KvmProbeOptions options_;
};

// The probe domain: 32 MiB, one vCPU, the kvm default CPU (host-model) and machine (q35 on x86).
// With a boot disk: that raw disk, read-only, and COM1 written to serial_log.
struct KvmProbeDomain {
  std::string name;
  std::string arch;
  std::string type = "kvm";
  std::string boot_disk;   // empty: no disk
  std::string serial_log;  // empty: no serial port
};
std::string kvm_probe_domain_xml(const KvmProbeDomain& domain);

// What to tell an operator about QEMU's failure message (libvirt's text of it).
std::string kvm_fix_for(const std::string& failure);

// server.domain_type: auto picks kvm when the probe passes, else qemu with a warning.
enum class DomainTypeSetting { Auto, Kvm, Qemu };
const char* to_string(DomainTypeSetting setting);  // auto | kvm | qemu

struct DomainTypeChoice {
  plan::DomainType type = plan::DomainType::Qemu;
  DomainTypeSetting setting = DomainTypeSetting::Auto;
  bool probed = false;  // false for an explicit qemu: nothing was started
  KvmVerdict verdict;
  // Set when auto fell back to software emulation: shown in the log, GET /nodes, node check
  // and the web UI.
  std::string warning;
};

class KvmUnusable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Runs the probe unless the setting is qemu. An explicit kvm on a host where KVM does not run
// throws KvmUnusable with QEMU's reason and the fix.
DomainTypeChoice choose_domain_type(DomainTypeSetting setting, KvmProbe& probe);

// The warning for software emulation, in one place for the log, the API and the UI.
extern const char* const kSoftwareEmulationWarning;

}  // namespace bowline::engine
