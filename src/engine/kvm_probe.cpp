#include "engine/kvm_probe.hpp"

#include <sys/stat.h>

#include <pugixml.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "engine/identifiers.hpp"
#include "util/strings.hpp"

namespace bowline::engine {

const char* const kSoftwareEmulationWarning =
    "software emulation: hardware KVM does not run guests on this host, so guests run several "
    "times slower (domain type qemu)";

const char* to_string(DomainTypeSetting setting) {
  switch (setting) {
    case DomainTypeSetting::Auto:
      return "auto";
    case DomainTypeSetting::Kvm:
      return "kvm";
    case DomainTypeSetting::Qemu:
      return "qemu";
  }
  return "auto";
}

std::string kvm_probe_domain_xml(const std::string& name, const std::string& arch) {
  pugi::xml_document doc;
  auto domain = doc.append_child("domain");
  domain.append_attribute("type") = "kvm";
  domain.append_child("name").text() = name.c_str();
  auto memory = domain.append_child("memory");
  memory.append_attribute("unit") = "MiB";
  memory.text() = "32";
  domain.append_child("vcpu").text() = "1";
  auto type = domain.append_child("os").append_child("type");
  if (!arch.empty()) type.append_attribute("arch") = arch.c_str();
  type.text() = "hvm";
  // The CPU spaces get on kvm when the template names none (libvirt/domain_xml.cpp).
  domain.append_child("cpu").append_attribute("mode") = "host-model";
  // Nothing QEMU would have to open or the guest could use.
  auto devices = domain.append_child("devices");
  devices.append_child("memballoon").append_attribute("model") = "none";
  std::ostringstream out;
  doc.save(out, "  ", pugi::format_default | pugi::format_no_declaration);
  return out.str();
}

namespace {

// libvirt quotes QEMU's stderr with a timestamp on each line: keep QEMU's words, one line.
std::string without_timestamps(const std::string& text) {
  static const std::regex stamp(R"(\d{4}-\d\d-\d\dT[0-9:.]+Z\s*)");
  std::string out;
  for (const auto& line : util::split(std::regex_replace(text, stamp, ""), '\n')) {
    const auto trimmed = util::trim(line);
    if (!trimmed.empty()) out += (out.empty() ? "" : "; ") + trimmed;
  }
  return out;
}

bool contains(const std::string& text, const char* what) {
  return util::to_lower(text).find(util::to_lower(what)) != std::string::npos;
}

}  // namespace

std::string kvm_fix_for(const std::string& failure) {
  if (contains(failure, "failed to set MSR") || contains(failure, "KVM internal error") ||
      contains(failure, "emulation failure"))
    return "KVM is present but cannot run this CPU, as under nested virtualisation that the outer "
           "hypervisor provides only in part: run spaces under software emulation "
           "(server.domain_type auto or qemu), or give this host full nested virtualisation "
           "(on the outer host: kvm_intel nested=1 or kvm_amd nested=1, and a host-passthrough "
           "CPU for this VM)";
  if (contains(failure, "/dev/kvm") &&
      (contains(failure, "permission denied") || contains(failure, "Could not access")))
    return "chgrp kvm /dev/kvm && chmod 0660 /dev/kvm (scripts/prepare-host does it), then "
           "restart libvirtd";
  if (contains(failure, "no such file") || contains(failure, "not supported") ||
      contains(failure, "no accelerator") || contains(failure, "kvm is not available"))
    return "enable virtualisation (VT-x/AMD-V) in the firmware and load the module (modprobe "
           "kvm_intel or kvm_amd); inside a VM, enable nested virtualisation on the outer host; "
           "or run spaces under software emulation (server.domain_type auto or qemu)";
  return "run spaces under software emulation (server.domain_type auto or qemu), or fix the "
         "cause QEMU names";
}

LibvirtKvmProbe::LibvirtKvmProbe(libvirt::Hypervisor& hypervisor, KvmProbeOptions options)
    : hypervisor_(hypervisor), options_(std::move(options)) {
  if (!options_.sleep)
    options_.sleep = [](std::chrono::milliseconds ms) { std::this_thread::sleep_for(ms); };
}

KvmVerdict LibvirtKvmProbe::probe() {
  KvmVerdict verdict;
  struct stat st {};
  if (::stat(options_.kvm_device.c_str(), &st) != 0) {
    verdict.detail = options_.kvm_device + " does not exist: no hardware virtualisation here";
    verdict.fix = kvm_fix_for("no such file");
    return verdict;
  }
  libvirt::DomainCapabilities caps;
  try {
    caps = hypervisor_.domain_capabilities("kvm");
  } catch (const std::exception& e) {
    caps.reason = e.what();
  }
  if (!caps.supported) {
    verdict.detail = "libvirt offers no domain type kvm: " +
                     (caps.reason.empty() ? std::string("not supported") : caps.reason);
    verdict.fix = kvm_fix_for("not supported");
    return verdict;
  }

  const auto name = "bowline-kvm-probe-" + random_hex(8);
  try {
    hypervisor_.create_transient(kvm_probe_domain_xml(name, caps.arch));
  } catch (const libvirt::HypervisorError& e) {
    const auto words = without_timestamps(e.cause().empty() ? e.what() : e.cause());
    verdict.detail = "QEMU could not start a KVM guest: " + words;
    verdict.fix = kvm_fix_for(words);
    return verdict;
  }
  // Running is not enough at once: an internal KVM error pauses the vCPU a moment later.
  const auto step = std::chrono::milliseconds(100);
  std::chrono::milliseconds ran{0};
  libvirt::DomainStatus status;
  std::string failure;
  while (true) {
    try {
      status = hypervisor_.state(name);
    } catch (const libvirt::HypervisorError& e) {
      failure = e.is_no_domain() ? "the KVM guest's QEMU exited at once" : e.what();
      break;
    }
    if (status.state != libvirt::DomainState::Running) {
      failure = std::string("QEMU stopped the KVM guest's vCPU (state ") +
                libvirt::to_string(status.state) +
                "): KVM internal error; the domain log under /var/log/libvirt/qemu/ has QEMU's "
                "words";
      break;
    }
    if (ran >= options_.run_for) break;
    options_.sleep(step);
    ran += step;
  }
  try {
    hypervisor_.destroy(name);
  } catch (const libvirt::HypervisorError&) {  // gone already: AUTODESTROY or QEMU exited
  }
  if (!failure.empty()) {
    verdict.detail = failure;
    verdict.fix = kvm_fix_for("KVM internal error");
    return verdict;
  }
  std::ostringstream detail;
  detail.precision(1);
  detail << std::fixed << "a KVM guest with the host-model CPU ran for "
         << static_cast<double>(ran.count()) / 1000.0 << " s";
  verdict.usable = true;
  verdict.detail = detail.str();
  return verdict;
}

DomainTypeChoice choose_domain_type(DomainTypeSetting setting, KvmProbe& probe) {
  DomainTypeChoice choice;
  choice.setting = setting;
  if (setting == DomainTypeSetting::Qemu) {
    choice.type = plan::DomainType::Qemu;
    return choice;
  }
  choice.verdict = probe.probe();
  choice.probed = true;
  if (choice.verdict.usable) {
    choice.type = plan::DomainType::Kvm;
    return choice;
  }
  if (setting == DomainTypeSetting::Kvm)
    throw KvmUnusable("server.domain_type is kvm, but KVM does not run guests on this host: " +
                      choice.verdict.detail + ". Fix: " + choice.verdict.fix);
  choice.type = plan::DomainType::Qemu;
  choice.warning = std::string(kSoftwareEmulationWarning) + " (" + choice.verdict.detail + ")";
  return choice;
}

}  // namespace bowline::engine
