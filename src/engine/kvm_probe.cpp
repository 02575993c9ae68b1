#include "engine/kvm_probe.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include <pugixml.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "engine/identifiers.hpp"
#include "engine/kvm_probe_guest.hpp"
#include "util/files.hpp"
#include "util/strings.hpp"

namespace bowline::engine {

namespace fs = std::filesystem;

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

std::string kvm_probe_domain_xml(const KvmProbeDomain& d) {
  pugi::xml_document doc;
  auto domain = doc.append_child("domain");
  domain.append_attribute("type") = d.type.c_str();
  domain.append_child("name").text() = d.name.c_str();
  auto memory = domain.append_child("memory");
  memory.append_attribute("unit") = "MiB";
  memory.text() = "32";
  domain.append_child("vcpu").text() = "1";
  auto os = domain.append_child("os");
  auto type = os.append_child("type");
  if (!d.arch.empty()) type.append_attribute("arch") = d.arch.c_str();
  // The machine spaces get (plan::Plan's default), where it exists.
  if (d.arch == "x86_64" || d.arch == "i686") type.append_attribute("machine") = "q35";
  type.text() = "hvm";
  if (!d.boot_disk.empty()) os.append_child("boot").append_attribute("dev") = "hd";
  // The CPU spaces get on kvm when the template names none (libvirt/domain_xml.cpp).
  if (d.type == "kvm") domain.append_child("cpu").append_attribute("mode") = "host-model";
  auto devices = domain.append_child("devices");
  if (!d.boot_disk.empty()) {
    auto disk = devices.append_child("disk");
    disk.append_attribute("type") = "file";
    disk.append_attribute("device") = "disk";
    auto driver = disk.append_child("driver");
    driver.append_attribute("name") = "qemu";
    driver.append_attribute("type") = "raw";
    disk.append_child("source").append_attribute("file") = d.boot_disk.c_str();
    auto target = disk.append_child("target");
    target.append_attribute("dev") = "vda";
    target.append_attribute("bus") = "virtio";
    disk.append_child("readonly");
  }
  if (!d.serial_log.empty()) {
    auto serial = devices.append_child("serial");
    serial.append_attribute("type") = "file";
    serial.append_child("source").append_attribute("path") = d.serial_log.c_str();
    serial.append_child("target").append_attribute("port") = "0";
  }
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

namespace {

std::string read_all(const fs::path& path) {
  return util::read_file(path).value_or("");
}

// The probe's boot disk and serial log, in a fresh directory under the work directory that
// QEMU can traverse; gone when this is.
class ProbeFiles {
 public:
  explicit ProbeFiles(const std::string& parent) {
    std::string pattern = parent + "/.kvm-probe.XXXXXX";
    if (!::mkdtemp(pattern.data())) throw std::runtime_error(std::strerror(errno));
    dir_ = pattern;
    try {
      // QEMU runs as its own user: it must reach the disk, which libvirt labels for it.
      fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
      const auto image = kvm_probe_guest_image();
      std::ofstream out(disk(), std::ios::binary);
      out.write(reinterpret_cast<const char*>(image.data()),
                static_cast<std::streamsize>(image.size()));
      out.close();
      if (!out) throw std::runtime_error("cannot write " + disk());
      // Firmware does not boot a disk of a few sectors: make it a (sparse) 1 MiB one.
      fs::resize_file(disk(), 1 << 20);
    } catch (...) {
      remove();
      throw;
    }
  }
  ~ProbeFiles() { remove(); }
  ProbeFiles(const ProbeFiles&) = delete;
  ProbeFiles& operator=(const ProbeFiles&) = delete;
  std::string disk() const { return (dir_ / "boot.img").string(); }
  std::string serial() const { return (dir_ / "serial.log").string(); }

 private:
  void remove() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

// QEMU's own words about the probe domain, from its libvirt log, which goes afterwards (the
// domain was ours and is gone). Empty when the log cannot be read (another host, no rights).
std::string qemu_words(const std::string& log_dir, const std::string& domain) {
  const auto path = fs::path(log_dir) / (domain + ".log");
  std::string words;
  for (const auto& line : util::split(read_all(path), '\n'))
    if (contains(line, "KVM internal error") || contains(line, "emulation failure") ||
        contains(line, "error:"))
      words += (words.empty() ? "" : "; ") + util::trim(without_timestamps(line));
  std::error_code ec;
  fs::remove(path, ec);
  return words;
}

std::string seconds(std::chrono::milliseconds ms) {
  std::ostringstream out;
  out.precision(1);
  out << std::fixed << static_cast<double>(ms.count()) / 1000.0 << " s";
  return out.str();
}

// "before big real mode (after a BIOS disk read in real mode)".
std::string where_it_stopped(std::size_t done) {
  const auto steps = kvm_probe_steps();
  std::string out = "before " + std::string(steps[done].what);
  if (done > 0) out += " (after " + std::string(steps[done - 1].what) + ")";
  return out;
}

// Watches the probe guest until its program prints the last marker (or, without the program,
// for run_for); returns why it failed, empty when it did not. Running is not enough at once: an
// internal KVM error pauses the vCPU a moment later, and a vCPU can run on for ever where a real
// guest's boot has stopped.
std::string watch(libvirt::Hypervisor& hypervisor, const KvmProbeOptions& options,
                  const std::string& name, const ProbeFiles* files,
                  std::chrono::milliseconds& ran) {
  const auto step = std::chrono::milliseconds(100);
  const auto limit = files ? options.boot_within : options.run_for;
  const auto all = kvm_probe_steps().size();
  std::size_t done = 0;
  while (true) {
    libvirt::DomainStatus status;
    try {
      status = hypervisor.state(name);
    } catch (const libvirt::HypervisorError& e) {
      return e.is_no_domain() ? "the guest's QEMU exited at once" : e.what();
    }
    if (files) done = kvm_probe_steps_done(read_all(files->serial()));
    if (files && done == all) return {};
    if (status.state != libvirt::DomainState::Running)
      return std::string("QEMU stopped the guest's vCPU (state ") +
             libvirt::to_string(status.state) + ")" +
             (files ? " during its boot, " + where_it_stopped(done) : std::string()) +
             ": KVM internal error";
    if (ran >= limit)
      return files ? "the guest started but its boot stopped " + where_it_stopped(done) +
                         ": no progress in " + seconds(limit)
                   : std::string();
    options.sleep(step);
    ran += step;
  }
}

}  // namespace

KvmVerdict LibvirtKvmProbe::probe() {
  KvmVerdict verdict;
  const bool kvm = options_.domain_type == "kvm";
  struct stat st {};
  if (kvm && ::stat(options_.kvm_device.c_str(), &st) != 0) {
    verdict.detail = options_.kvm_device + " does not exist: no hardware virtualisation here";
    verdict.fix = kvm_fix_for("no such file");
    return verdict;
  }
  libvirt::DomainCapabilities caps;
  try {
    caps = hypervisor_.domain_capabilities(options_.domain_type);
  } catch (const std::exception& e) {
    caps.reason = e.what();
  }
  if (!caps.supported) {
    verdict.detail = "libvirt offers no domain type " + options_.domain_type + ": " +
                     (caps.reason.empty() ? std::string("not supported") : caps.reason);
    verdict.fix = kvm_fix_for("not supported");
    return verdict;
  }

  KvmProbeDomain domain;
  domain.name = "bowline-kvm-probe-" + random_hex(8);
  domain.arch = caps.arch;
  domain.type = options_.domain_type;
  const std::string guest =
      kvm ? "a KVM guest with the host-model CPU" : "a guest under software emulation";
  std::unique_ptr<ProbeFiles> files;
  std::string weaker;  // why the guest has no probe program, when it has none
  if (kvm_probe_guest_image().empty())
    weaker = "no probe program for this architecture";
  else if (options_.work_dir.empty())
    weaker = "no directory for the probe program";
  else
    try {
      files = std::make_unique<ProbeFiles>(options_.work_dir);
      domain.boot_disk = files->disk();
      domain.serial_log = files->serial();
    } catch (const std::exception& e) {
      weaker = "cannot write the probe program in " + options_.work_dir + ": " + e.what();
    }

  try {
    hypervisor_.create_transient(kvm_probe_domain_xml(domain));
  } catch (const libvirt::HypervisorError& e) {
    const auto words = without_timestamps(e.cause().empty() ? e.what() : e.cause());
    verdict.detail = "QEMU could not start " + guest + ": " + words;
    verdict.fix = kvm_fix_for(words);
    return verdict;
  }
  std::chrono::milliseconds ran{0};
  const auto failure = watch(hypervisor_, options_, domain.name, files.get(), ran);
  try {
    hypervisor_.destroy(domain.name);
  } catch (const libvirt::HypervisorError&) {  // gone already: AUTODESTROY or QEMU exited
  }
  if (!failure.empty()) {
    const auto words = qemu_words(options_.qemu_log_dir, domain.name);
    verdict.detail =
        guest + ": " + failure +
        (words.empty() ? "; the domain log under " + options_.qemu_log_dir + "/ has QEMU's words"
                       : "; QEMU said: " + words);
    verdict.fix = kvm_fix_for("KVM internal error");
    return verdict;
  }
  std::error_code ec;  // the throwaway domain's log goes too
  fs::remove(fs::path(options_.qemu_log_dir) / (domain.name + ".log"), ec);
  verdict.usable = true;
  verdict.detail = files ? guest + " booted bowline's probe program to long mode in " + seconds(ran)
                         : guest + " ran for " + seconds(ran) + " (" + weaker + ")";
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
