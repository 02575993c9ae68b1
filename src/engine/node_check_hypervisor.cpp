// The hypervisor's checks: /dev/kvm, whether a KVM guest really runs, libvirt, qemu-img and
// the domain type QEMU can run.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/node_check_kinds.hpp"

namespace bowline::engine::node_checks {

Check check_kvm(const NodeCheckOptions& options, const std::optional<Identity>& qemu) {
  auto c = make_check("kvm", options.kvm_device + " usable");
  struct stat st {};
  if (::stat(options.kvm_device.c_str(), &st) != 0) {
    c.status = CheckStatus::Missing;
    c.detail = options.kvm_device + " does not exist: no hardware virtualisation on this host";
    c.fix =
        "enable virtualisation (VT-x/AMD-V) in the firmware and load the module "
        "(modprobe kvm_intel or modprobe kvm_amd); on a host without it run the server with "
        "--domain-type qemu (software emulation, slow)";
    return c;
  }
  if (!S_ISCHR(st.st_mode)) {
    c.status = CheckStatus::Missing;
    c.detail = options.kvm_device + " is not a character device";
    c.fix = "reload the kvm module (modprobe -r kvm_intel && modprobe kvm_intel)";
    return c;
  }
  const char* group_fix =
      "chgrp kvm /dev/kvm && chmod 0660 /dev/kvm (scripts/prepare-host does it)";
  if (qemu) {
    const auto ok = may_access(options.kvm_device, *qemu, 06);
    if (ok && !*ok) {
      c.status = CheckStatus::Missing;
      c.detail = "the QEMU user " + qemu->name + " cannot open " + options.kvm_device +
                 " for reading and writing";
      c.fix = group_fix;
      return c;
    }
    c.detail = "character device, usable by " + qemu->name;
    return c;
  }
  const int fd = ::open(options.kvm_device.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    c.status = CheckStatus::Missing;
    c.detail = "cannot open " + options.kvm_device + ": " + std::strerror(errno);
    c.fix = group_fix;
    return c;
  }
  ::close(fd);
  c.detail = "character device, opens for reading and writing";
  return c;
}

// Whether KVM runs guests here: the probe's verdict. Required for kvm; for auto it only
// decides between kvm and software emulation.
Check check_kvm_runs(const NodeCheckOptions& options, const KvmVerdict* verdict) {
  auto c = make_check("kvm-runs",
                      "QEMU runs a KVM guest (a throwaway domain boots bowline's probe program)");
  c.required = options.domain_type == "kvm";
  if (!verdict) {
    c.status = CheckStatus::Warn;
    c.required = false;
    c.detail = "not probed";
    return c;
  }
  c.detail = verdict->detail;
  if (!verdict->usable) {
    c.status = c.required ? CheckStatus::Missing : CheckStatus::Warn;
    c.fix = verdict->fix;
  }
  return c;
}

Check check_libvirt(const NodeCheckContext& context) {
  auto c = make_check("libvirt", "libvirt reachable at " + context.uri);
  if (!context.hypervisor) {
    c.status = CheckStatus::Missing;
    c.detail = context.connect_error.empty() ? "cannot connect" : context.connect_error;
    c.fix =
        "start the daemons (virtlogd -d; libvirtd -d, or systemctl start libvirtd; "
        "scripts/prepare-host does both) and check that this user may connect to " +
        context.uri;
    return c;
  }
  c.detail = "connected";
  return c;
}

Check check_qemu_img(const NodeCheckOptions& options, util::ProcessRunner* runner) {
  auto c = make_check("qemu-img", "qemu-img present");
  if (!runner) {
    c.status = CheckStatus::Warn;
    c.detail = "not checked";
    return c;
  }
  const auto result = runner->run({options.qemu_img, "--version"}, std::chrono::seconds(10));
  if (result.exit_code != 0) {
    c.status = CheckStatus::Missing;
    c.detail = result.exit_code == 127
                   ? options.qemu_img + " not found"
                   : options.qemu_img + " --version failed: " +
                         first_line(result.err.empty() ? result.out : result.err);
    c.fix = "apt-get install qemu-utils";
    return c;
  }
  c.detail = first_line(result.out);
  return c;
}

Check check_domain_type(const NodeCheckOptions& options, libvirt::Hypervisor* hypervisor) {
  auto c = make_check("domain-type", "QEMU can run domain type " + options.domain_type);
  if (!hypervisor) {
    c.status = CheckStatus::Missing;
    c.detail = "not checked: libvirt is not reachable";
    c.fix = "make libvirt reachable first";
    return c;
  }
  libvirt::DomainCapabilities caps;
  try {
    caps = hypervisor->domain_capabilities(options.domain_type);
  } catch (const std::exception& e) {
    caps.supported = false;
    caps.reason = e.what();
  }
  if (!caps.supported) {
    c.status = CheckStatus::Missing;
    c.detail = caps.reason.empty() ? "not supported" : caps.reason;
    c.fix = options.domain_type == "kvm"
                ? "install qemu-system-x86 and make /dev/kvm usable, or run the server with "
                  "--domain-type qemu"
                : "apt-get install qemu-system-x86 (and restart libvirtd so it probes QEMU again)";
    return c;
  }
  std::string detail = caps.emulator.empty() ? std::string("supported") : caps.emulator;
  if (!caps.machine.empty()) detail += ", machine " + caps.machine;
  if (!caps.arch.empty()) detail += ", " + caps.arch;
  if (caps.max_vcpus) detail += ", up to " + std::to_string(caps.max_vcpus) + " vCPUs";
  c.detail = detail;
  return c;
}

}  // namespace bowline::engine::node_checks
