#include "engine/node_check.hpp"

#include "engine/devices.hpp"
#include "engine/dhcp_lease_check.hpp"
#include "engine/traffic_filter.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "spec/validators.hpp"

namespace bowline::engine {

namespace fs = std::filesystem;

const char* to_string(CheckStatus status) {
  switch (status) {
    case CheckStatus::Ok:
      return "ok";
    case CheckStatus::Warn:
      return "warn";
    case CheckStatus::Missing:
      return "missing";
  }
  return "missing";
}

namespace {

void add_once(std::vector<std::string>& list, const std::string& value) {
  if (!value.empty() && std::find(list.begin(), list.end(), value) == list.end())
    list.push_back(value);
}

// The expression syntax a value keeps when the template is loaded without values.
bool templated(const std::string& value) {
  return value.find("${{") != std::string::npos;
}

}  // namespace

void NodeRequirements::add(const spec::Spec& spec) {
  if (!templated(spec.network.bridge)) {
    if (spec.network.mode == spec::NetworkMode::Bridged)
      add_once(bridges, spec.network.bridge);
    else
      add_once(networks, spec.network.bridge);
  }
  for (const auto& network : spec.networks)
    if (!templated(network)) add_once(networks, network);
  auto add_device = [&](const spec::Device& device) {
    const auto same = [&](const spec::Device& d) { return d.text == device.text; };
    if (std::none_of(devices.begin(), devices.end(), same)) devices.push_back(device);
  };
  for (const auto& device : spec.devices) add_device(device);
  if (spec.external && spec.external_method == spec::ExternalMethod::PortList &&
      spec.network.mode == spec::NetworkMode::Nat)
    external_ports = true;
  // GPUs given as PCI addresses; a device-plugin name is resolved when the space starts.
  for (const auto& gpu : spec.gpus)
    if (auto device = spec::gpu_pci_address(gpu)) add_device(*device);
}

// ---- identities and permissions ----------------------------------------------------------

std::optional<Identity> lookup_identity(const std::string& user) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwnam_r(user.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found)
    return std::nullopt;
  Identity id;
  id.name = user;
  id.uid = found->pw_uid;
  id.gid = found->pw_gid;
  int count = 64;
  std::vector<gid_t> groups(static_cast<std::size_t>(count));
  if (getgrouplist(user.c_str(), found->pw_gid, groups.data(), &count) < 0) {
    groups.resize(static_cast<std::size_t>(count));
    getgrouplist(user.c_str(), found->pw_gid, groups.data(), &count);
  }
  groups.resize(static_cast<std::size_t>(std::max(count, 0)));
  for (const auto g : groups) id.groups.push_back(g);
  if (std::find(id.groups.begin(), id.groups.end(), id.gid) == id.groups.end())
    id.groups.push_back(id.gid);
  return id;
}

namespace {

bool in_group(const Identity& who, unsigned gid) {
  return std::find(who.groups.begin(), who.groups.end(), gid) != who.groups.end();
}

// The POSIX access ACL of `path` (system.posix_acl_access, Linux's xattr layout: a version
// word, then {tag u16, perm u16, id u32} entries, little-endian). Empty: none.
struct AclEntry {
  std::uint16_t tag = 0;
  std::uint16_t perm = 0;
  std::uint32_t id = 0;
};
constexpr std::uint16_t kAclUserObj = 0x01, kAclUser = 0x02, kAclGroupObj = 0x04, kAclGroup = 0x08,
                        kAclMask = 0x10, kAclOther = 0x20;

std::vector<AclEntry> read_access_acl(const std::string& path) {
  std::vector<AclEntry> entries;
  unsigned char buffer[4096];
  const auto size = lgetxattr(path.c_str(), "system.posix_acl_access", buffer, sizeof buffer);
  if (size < 4) return entries;
  auto u16 = [&](std::size_t at) {
    return static_cast<std::uint16_t>(buffer[at] | (buffer[at + 1] << 8));
  };
  auto u32 = [&](std::size_t at) {
    return static_cast<std::uint32_t>(buffer[at]) |
           (static_cast<std::uint32_t>(buffer[at + 1]) << 8) |
           (static_cast<std::uint32_t>(buffer[at + 2]) << 16) |
           (static_cast<std::uint32_t>(buffer[at + 3]) << 24);
  };
  if (u32(0) != 2) return entries;  // POSIX_ACL_XATTR_VERSION
  for (std::size_t at = 4; at + 8 <= static_cast<std::size_t>(size); at += 8)
    entries.push_back({u16(at), u16(at + 2), u32(at + 4)});
  return entries;
}

// The kernel's order (fs/posix_acl.c posix_acl_permission): owner, named user, groups, other.
bool acl_allows(const std::vector<AclEntry>& acl, const struct stat& st, const Identity& who,
                unsigned mask) {
  std::uint16_t acl_mask = 07;
  for (const auto& e : acl)
    if (e.tag == kAclMask) acl_mask = e.perm;
  if (who.uid == st.st_uid) {
    for (const auto& e : acl)
      if (e.tag == kAclUserObj) return (e.perm & mask) == mask;
  }
  for (const auto& e : acl)
    if (e.tag == kAclUser && e.id == who.uid) return (e.perm & acl_mask & mask) == mask;
  bool group_matched = false;
  for (const auto& e : acl) {
    const bool matches = (e.tag == kAclGroupObj && in_group(who, st.st_gid)) ||
                         (e.tag == kAclGroup && in_group(who, e.id));
    if (!matches) continue;
    group_matched = true;
    if ((e.perm & acl_mask & mask) == mask) return true;
  }
  if (group_matched) return false;
  for (const auto& e : acl)
    if (e.tag == kAclOther) return (e.perm & mask) == mask;
  return false;
}

}  // namespace

std::optional<bool> may_access(const std::string& path, const Identity& who, unsigned mask) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  if (who.uid == 0) {
    // root passes read/write always, execute when anyone may execute (or a directory).
    if (!(mask & 1)) return true;
    return S_ISDIR(st.st_mode) || (st.st_mode & 0111) != 0;
  }
  const auto acl = read_access_acl(path);
  if (!acl.empty()) return acl_allows(acl, st, who, mask);
  unsigned bits = 0;
  if (who.uid == st.st_uid)
    bits = (st.st_mode >> 6) & 07;
  else if (in_group(who, st.st_gid))
    bits = (st.st_mode >> 3) & 07;
  else
    bits = st.st_mode & 07;
  return (bits & mask) == mask;
}

std::vector<std::string> untraversable_components(const std::string& path, const Identity& who) {
  std::vector<std::string> blocked;
  auto walk = [&](const fs::path& full) {
    fs::path current;
    for (const auto& part : full) {
      current /= part;
      const auto ok = may_access(current.string(), who, 1);
      if (!ok) break;  // does not exist (yet): nothing further to walk
      const auto text = current.string();
      if (!*ok && std::find(blocked.begin(), blocked.end(), text) == blocked.end())
        blocked.push_back(text);
    }
  };
  std::error_code ec;
  const auto absolute = fs::absolute(fs::path(path), ec).lexically_normal();
  walk(absolute);  // the path as written (a symlinked parent must be entered too)
  const auto real = fs::weakly_canonical(absolute, ec);
  if (!ec && real != absolute) walk(real);  // and where the symlinks lead
  return blocked;
}

// ---- the checks --------------------------------------------------------------------------

namespace {

Check make_check(std::string name, std::string title) {
  Check c;
  c.name = std::move(name);
  c.title = std::move(title);
  return c;
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

std::string first_line(const std::string& text) {
  auto line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::optional<Identity> qemu_identity(const NodeCheckOptions& options) {
  for (const auto& user : options.qemu_users)
    if (auto id = lookup_identity(user)) return id;
  return std::nullopt;
}

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

// A directory QEMU must reach (its user must enter every directory above the files it opens)
// and, when `writable`, bowline must be able to fill (it makes it when it is missing).
struct StoragePath {
  std::string name;  // the check's id
  std::string what;  // "images path", "cloud-image library", "base-image cache"
  std::string setting;
  std::string path;
  bool writable = true;
};

Check check_storage_path(const StoragePath& where, const NodeCheckOptions& options,
                         const std::optional<Identity>& qemu) {
  const auto& path = where.path;
  auto c = make_check(where.name, where.what + " " + path +
                                      (where.writable ? " writable, and traversable by QEMU"
                                                      : " readable, and traversable by QEMU"));
  std::error_code ec;
  const auto absolute = fs::absolute(fs::path(path), ec).lexically_normal();
  if (!fs::exists(absolute, ec)) {
    // Where would it be made? The nearest parent that exists must take a new directory.
    auto parent = absolute.parent_path();
    while (!parent.empty() && !fs::exists(parent, ec) && parent != parent.parent_path())
      parent = parent.parent_path();
    if (::access(parent.c_str(), W_OK | X_OK) != 0) {
      c.status = CheckStatus::Missing;
      c.detail = path + " does not exist and " + parent.string() + " is not writable by bowline";
      c.fix = "install -d -m 0755 -o $(id -un) " + absolute.string();
      return c;
    }
    c.status = CheckStatus::Warn;
    c.required = false;
    c.detail = path + " does not exist yet; bowline makes it at start";
  } else if (!fs::is_directory(absolute, ec)) {
    c.status = CheckStatus::Missing;
    c.detail = path + " is not a directory";
    c.fix = "point " + where.setting + " at a directory";
    return c;
  } else if (::access(absolute.c_str(), (where.writable ? W_OK : R_OK) | X_OK) != 0) {
    c.status = CheckStatus::Missing;
    c.detail = "bowline cannot " + std::string(where.writable ? "write to " : "read ") + path +
               ": " + std::strerror(errno);
    c.fix = "chown $(id -un) " + absolute.string() + " (or run the server as its owner)";
    return c;
  }

  if (!qemu) {
    if (c.status == CheckStatus::Ok) {
      c.status = CheckStatus::Warn;
      c.required = false;
      c.detail = std::string(where.writable ? "writable" : "readable") + "; no QEMU user (" +
                 join(options.qemu_users, ", ") + ") on this host, so its access was not checked";
    }
    return c;
  }
  const auto blocked = untraversable_components(absolute.string(), *qemu);
  if (!blocked.empty()) {
    c.status = CheckStatus::Missing;
    c.required = true;
    c.detail = "the QEMU user " + qemu->name + " cannot enter " + join(blocked, ", ") +
               ": QEMU will fail to open " +
               (where.writable && where.name == "images-path" ? "the disks" : "the images") +
               " with \"Permission denied\"";
    c.fix = "setfacl -m u:" + qemu->name + ":x " + join(blocked, " ") +
            " (or chmod o+x each, or move " + where.setting + " out of a private directory)";
    return c;
  }
  if (c.status == CheckStatus::Ok)
    c.detail = std::string(where.writable ? "writable" : "readable") +
               " by bowline; every parent traversable by " + qemu->name;
  return c;
}

// External ports of NAT spaces are DNAT: the host must forward IPv4.
Check check_ip_forward(const NodeCheckOptions& options) {
  auto c = make_check("ip-forward", "the host forwards IPv4 (external ports of NAT spaces)");
  std::string value;
  std::ifstream(options.ip_forward_file) >> value;
  if (value == "1") {
    c.detail = "net.ipv4.ip_forward is 1";
    return c;
  }
  c.status = CheckStatus::Missing;
  c.detail = value.empty() ? "cannot read " + options.ip_forward_file
                           : "net.ipv4.ip_forward is " + value + ": external ports reach no guest";
  c.fix =
      "sysctl -w net.ipv4.ip_forward=1, and net.ipv4.ip_forward=1 in /etc/sysctl.d/ to keep it "
      "(libvirt's NAT networks turn it on too)";
  return c;
}

std::vector<StoragePath> storage_paths(const NodeCheckOptions& options) {
  std::vector<StoragePath> out{
      {"images-path", "images path", "server.kvm.images_path", options.images_path, true}};
  // The library and the cache hold the base images that QEMU opens as backing files.
  if (!options.cloud_image_path.empty())
    out.push_back({"cloud-image-path", "cloud-image library", "server.kvm.cloud_image_path",
                   options.cloud_image_path, false});
  if (!options.base_image_path.empty())
    out.push_back({"base-image-path", "base-image cache", "server.kvm.base_image_path",
                   options.base_image_path, true});
  return out;
}

Check check_bridge(const std::string& bridge, const HostProbe* host) {
  auto c = make_check("bridge:" + bridge, "bridge " + bridge + " exists with a NIC");
  if (!host) {
    c.status = CheckStatus::Warn;
    c.required = false;
    c.detail = "not checked";
    return c;
  }
  if (!host->bridge_exists(bridge)) {
    c.status = CheckStatus::Missing;
    c.detail = "no bridge " + bridge +
               " on this host: spaces of templates that name it are "
               "refused at start";
    c.fix = "for guests on the LAN, create " + bridge +
            " in the host's network configuration with the uplink NIC as its port and the "
            "host's address moved from the NIC to the bridge in the same change (netplan: "
            "bridges: " +
            bridge + ": interfaces: [eth0] with the addresses; ifupdown: iface " + bridge +
            " with bridge_ports eth0), applied from a console, not over SSH: the NIC "
            "loses its address while it moves (docs/networking.md). For experiments a host-only "
            "bridge is enough: ip link add " +
            bridge + " type bridge && ip link set " + bridge + " up";
    return c;
  }
  const auto ports = host->bridge_ports(bridge);
  if (ports.empty()) {
    c.status = CheckStatus::Warn;
    c.required = false;
    c.detail = "bridge " + bridge + " has no enslaved NIC: it passes no traffic off the host";
    c.fix = "fine for experiments (guests reach this host only). To put " + bridge +
            " on the LAN, make the uplink NIC its port and move the host's address from the NIC "
            "to the bridge in one change of the host's network configuration, applied from a "
            "console: enslaving a NIC that holds the host's address cuts the host off the "
            "network (docs/networking.md)";
    return c;
  }
  c.detail = "ports: " + join(ports, ", ");
  return c;
}

Check check_network(const std::string& network, libvirt::Hypervisor* hypervisor) {
  auto c = make_check("network:" + network, "libvirt network " + network + " defined and active");
  if (!hypervisor) {
    c.status = CheckStatus::Missing;
    c.detail = "not checked: libvirt is not reachable";
    c.fix = "make libvirt reachable first";
    return c;
  }
  std::optional<libvirt::NetworkInfo> info;
  try {
    info = hypervisor->lookup_network(network);
  } catch (const std::exception& e) {
    c.status = CheckStatus::Missing;
    c.detail = e.what();
    return c;
  }
  if (!info) {
    c.status = CheckStatus::Missing;
    c.detail = "no libvirt network " + network;
    c.fix = network == "default"
                ? "virsh net-define /usr/share/libvirt/networks/default.xml && virsh net-start "
                  "default && virsh net-autostart default"
                : "virsh net-define NETWORK.xml (with <name>" + network +
                      "</name> and a <forward mode='nat'/>) && virsh net-start " + network +
                      " && virsh net-autostart " + network;
    return c;
  }
  if (!info->active) {
    c.status = CheckStatus::Missing;
    c.detail = "network " + network + " is defined but not active";
    c.fix = "virsh net-start " + network + " && virsh net-autostart " + network;
    return c;
  }
  c.detail = info->bridge.empty() ? "active" : "active on " + info->bridge;
  if (info->persistent && !info->autostart)
    c.detail += " (not autostarted: virsh net-autostart " + network + ")";
  return c;
}

std::string describe(const libvirt::NodeDevice& d) {
  std::ostringstream out;
  out << d.name;
  if (!d.vendor.empty() || !d.product.empty()) {
    out << " (" << d.vendor;
    if (!d.vendor.empty() && !d.product.empty()) out << " ";
    out << d.product << ")";
  }
  return out.str();
}

Check check_device(const spec::Device& want, const std::vector<libvirt::NodeDevice>& devices) {
  auto c =
      make_check("device:" + want.text, "device " + want.text + " present and passthrough-capable");
  const auto it = std::find_if(devices.begin(), devices.end(),
                               [&](const libvirt::NodeDevice& d) { return matches(want, d); });
  if (it == devices.end()) {
    c.status = CheckStatus::Missing;
    c.detail = "this host has no device " + want.text;
    c.fix = "plug it in, or drop it from the template (virsh nodedev-list lists the devices)";
    return c;
  }
  if (!libvirt::passthrough_capable(*it)) {
    c.status = CheckStatus::Missing;
    c.detail = describe(*it) + " has no IOMMU group: it cannot be passed through";
    c.fix =
        "enable the IOMMU (intel_iommu=on or amd_iommu=on on the kernel command line, VT-d or "
        "AMD-Vi in the firmware) and reboot";
    return c;
  }
  c.detail = describe(*it);
  if (it->iommu_group) c.detail += ", IOMMU group " + std::to_string(*it->iommu_group);
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

// The devices templates name, and a summary of what could be passed through.
void add_device_checks(NodeReport& report, const NodeCheckOptions& options,
                       const NodeCheckContext& context) {
  std::vector<libvirt::NodeDevice> devices;
  std::string device_error;
  if (context.hypervisor) {
    try {
      devices = context.hypervisor->node_devices();
    } catch (const std::exception& e) {
      device_error = e.what();
    }
  }
  for (const auto& device : devices)
    if (libvirt::passthrough_capable(device)) report.passthrough_devices.push_back(device);
  for (const auto& want : options.requirements.devices) {
    if (!context.hypervisor || !device_error.empty()) {
      auto c = make_check("device:" + want.text,
                          "device " + want.text + " present and passthrough-capable");
      c.status = CheckStatus::Missing;
      c.detail = device_error.empty() ? "not checked: libvirt is not reachable" : device_error;
      report.checks.push_back(c);
      continue;
    }
    report.checks.push_back(check_device(want, devices));
  }
  // What could be handed to a space: information, never a reason to withhold the runtime.
  auto summary = make_check("devices", "passthrough-capable devices");
  summary.required = false;
  if (!device_error.empty()) {
    summary.status = CheckStatus::Warn;
    summary.detail = device_error;
  } else if (!context.hypervisor) {
    summary.status = CheckStatus::Warn;
    summary.detail = "not checked: libvirt is not reachable";
  } else {
    std::vector<std::string> names;
    for (const auto& d : report.passthrough_devices) names.push_back(describe(d));
    summary.detail = names.empty() ? "none" : join(names, "; ");
  }
  report.checks.push_back(summary);
}

}  // namespace

NodeReport check_node(const NodeCheckOptions& options, const NodeCheckContext& context) {
  NodeReport report;
  report.name = options.node_name;
  report.uri = context.uri;
  report.domain_type_setting = options.domain_type;
  const bool auto_type = options.domain_type == "auto";
  report.domain_type = options.domain_type;
  if (auto_type) {
    report.domain_type = context.kvm && context.kvm->usable ? "kvm" : "qemu";
    if (report.domain_type == "qemu")
      report.warnings.push_back(kSoftwareEmulationWarning);  // why: the kvm-runs check
  }
  auto effective = options;
  effective.domain_type = report.domain_type;
  const auto qemu = qemu_identity(options);

  if (options.domain_type != "qemu") {
    auto device = check_kvm(options, qemu);
    if (auto_type && device.status != CheckStatus::Ok) {
      device.status = CheckStatus::Warn;
      device.required = false;
    }
    report.checks.push_back(device);
    report.checks.push_back(check_kvm_runs(options, context.kvm));
  }
  report.checks.push_back(check_libvirt(context));
  report.checks.push_back(check_qemu_img(options, context.runner));
  report.checks.push_back(check_domain_type(effective, context.hypervisor));
  report.checks.push_back(check_guest_filter(context, options));
  for (const auto& where : storage_paths(options))
    report.checks.push_back(check_storage_path(where, options, qemu));
  for (const auto& bridge : options.requirements.bridges)
    report.checks.push_back(check_bridge(bridge, context.host));
  for (const auto& network : options.requirements.networks) {
    report.checks.push_back(check_network(network, context.hypervisor));
    report.checks.push_back(check_one_lease_per_mac(network, context.hypervisor));
  }
  if (options.requirements.external_ports) report.checks.push_back(check_ip_forward(options));
  add_device_checks(report, options, context);

  const bool ready = std::none_of(report.checks.begin(), report.checks.end(), [](const Check& c) {
    return c.required && c.status != CheckStatus::Ok;
  });
  if (ready) report.runtimes.push_back("kvm");
  return report;
}

nlohmann::ordered_json to_json(const NodeReport& report) {
  using json = nlohmann::ordered_json;
  json checks = json::array();
  for (const auto& c : report.checks)
    checks.push_back({{"name", c.name},
                      {"title", c.title},
                      {"status", to_string(c.status)},
                      {"required", c.required},
                      {"detail", c.detail},
                      {"fix", c.fix}});
  json devices = json::array();
  for (const auto& d : report.passthrough_devices) {
    json device = {
        {"name", d.name},          {"kind", d.kind == libvirt::NodeDeviceKind::Pci ? "pci" : "usb"},
        {"vendorId", d.vendor_id}, {"productId", d.product_id},
        {"vendor", d.vendor},      {"product", d.product},
        {"driver", d.driver}};
    device["iommuGroup"] = d.iommu_group ? json(*d.iommu_group) : json(nullptr);
    devices.push_back(device);
  }
  return {{"name", report.name},
          {"uri", report.uri},
          {"domainType", report.domain_type},
          {"domainTypeSetting", report.domain_type_setting},
          {"warnings", report.warnings},
          {"runtimes", report.runtimes},
          {"ready", report.ready()},
          {"checks", checks},
          {"devices", devices}};
}

}  // namespace bowline::engine
