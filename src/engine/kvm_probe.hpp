// Whether hardware KVM really runs guests on a node. /dev/kvm existing, and libvirt offering
// domain type kvm, prove nothing: on some hosts (nested virtualisation that the outer
// hypervisor provides only in part) QEMU aborts at the first vCPU ("failed to set MSR 0x10a")
// or stops it with "KVM internal error ... emulation failure". Only starting QEMU proves KVM,
// so the probe starts a throwaway transient domain of type kvm with the CPU bowline would use,
// lets its vCPU run for about a second, and reports QEMU's own words when it does not.
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
  // How long the probe's vCPU must keep running; "KVM internal error" comes only once it runs.
  std::chrono::milliseconds run_for{1000};
  // Sleeps between state checks; tests pass one that does not wait.
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

// The probe domain: 32 MiB, one vCPU, the kvm default CPU (host-model), no devices to speak of.
std::string kvm_probe_domain_xml(const std::string& name, const std::string& arch);

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
