#include "libvirt/domain_xml.hpp"
#include "libvirt/nwfilter.hpp"
#include "util/utf8.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <pugixml.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace bowline::libvirt {
namespace {

// --- Values --------------------------------------------------------------------------------

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("domain XML: " + what);
}

// A value for a message: quoted, with line breaks shown.
std::string show(std::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else
      out += c;
  }
  return out + "\"";
}

// XML 1.0's Char production: what a document may hold at all, escaped or not.
bool is_xml_char(char32_t cp) {
  return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
         (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
}

bool is_xml_text(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto cp = util::decode_utf8(text, i);
    if (!cp || !is_xml_char(cp->value)) return false;
    i += cp->length;
  }
  return true;
}

// Free text: anything XML can hold.
const std::string& text(const char* field, const std::string& value) {
  if (!is_xml_text(value))
    fail(std::string("the ") + field + " " + show(value) +
         " holds a control character or malformed UTF-8");
  return value;
}

// A name: non-empty, one line (libvirt's schema rejects line breaks in names and paths).
const std::string& line(const char* field, const std::string& value) {
  if (value.empty()) fail(std::string("the ") + field + " is empty");
  if (value.find_first_of("\r\n") != std::string::npos)
    fail(std::string("the ") + field + " " + show(value) + " has a line break");
  return text(field, value);
}

const std::string& absolute_path(const char* field, const std::string& value) {
  line(field, value);
  if (value.front() != '/')
    fail(std::string("the ") + field + " " + show(value) + " is not an absolute path");
  return value;
}

const std::string& matching(const char* field, const std::string& value, const std::regex& re,
                            const char* expected) {
  if (!std::regex_match(value, re))
    fail(std::string("the ") + field + " " + show(value) + " is not " + expected);
  return value;
}

// Comment text: anything goes in, nothing breaks the comment. Malformed UTF-8 and characters
// XML cannot hold become '?', and "--" (which ends no comment but is forbidden inside one)
// is split.
std::string comment_text(std::string_view note) {
  std::string clean;
  for (std::size_t i = 0; i < note.size();) {
    const auto cp = util::decode_utf8(note, i);
    if (!cp || !is_xml_char(cp->value) || cp->value == '\r') {
      clean += cp && cp->value == '\r' ? ' ' : '?';
      i += cp ? cp->length : 1;
      continue;
    }
    if (cp->value == '-' && !clean.empty() && clean.back() == '-') clean += ' ';
    clean.append(note.substr(i, cp->length));
    i += cp->length;
  }
  return " " + clean + " ";
}

// --- Building ------------------------------------------------------------------------------

class Node {
 public:
  explicit Node(pugi::xml_node node) : node_(node) {}

  Node add(const char* name) { return Node(node_.append_child(name)); }
  Node& attr(const char* name, const std::string& value) {
    node_.append_attribute(name).set_value(value.c_str());
    return *this;
  }
  Node& text(const std::string& value) {
    node_.text().set(value.c_str());
    return *this;
  }
  void comment(std::string_view note) {
    node_.append_child(pugi::node_comment).set_value(comment_text(note).c_str());
  }

 private:
  pugi::xml_node node_;
};

const std::regex kUuid("[a-fA-F0-9]{8}-([a-fA-F0-9]{4}-){3}[a-fA-F0-9]{12}");
const std::regex kUnicastMac("[a-fA-F0-9][02468aAcCeE](:[a-fA-F0-9]{2}){5}");
const std::regex kMachine("[a-zA-Z0-9_.-]+");
const std::regex kTarget("(sd|vd)[a-z]+");
const std::regex kBridge("[a-zA-Z0-9_.\\-\\\\:/ ]+");
const std::regex kNicModel("[a-zA-Z0-9_-]+");
const std::regex kTap("bw[0-9a-f]{13}");

bool is_q35(const std::string& machine) {
  return machine == "q35" || machine.starts_with("pc-q35-");
}

std::uint64_t page_kib(const std::string& size) {
  if (size.empty()) return 0;
  if (size == "2Mi") return 2048;
  if (size == "1Gi") return 1048576;
  fail("the hugepages size " + show(size) + " is neither 2Mi nor 1Gi");
}

void add_metadata(Node domain, const DomainMetadata& m) {
  auto space =
      domain.add("metadata").add((std::string(kMetadataPrefix) + ":" + kMetadataElement).c_str());
  space.attr((std::string("xmlns:") + kMetadataPrefix).c_str(), kMetadataNamespace);
  const auto element = [](const char* local) { return std::string(kMetadataPrefix) + ":" + local; };
  if (!m.space_id.empty()) space.add(element("id").c_str()).text(text("space id", m.space_id));
  if (!m.space_name.empty())
    space.add(element("name").c_str()).text(text("space name", m.space_name));
  if (!m.template_id.empty() || !m.template_name.empty()) {
    auto t = space.add(element("template").c_str());
    if (!m.template_id.empty()) t.attr("id", text("template id", m.template_id));
    t.text(text("template name", m.template_name));
  }
  if (!m.owner.empty() || !m.owner_id.empty()) {
    auto o = space.add(element("owner").c_str());
    if (!m.owner_id.empty()) o.attr("id", text("owner id", m.owner_id));
    o.text(text("owner", m.owner));
  }
}

void add_cpu(Node domain, const plan::Plan& p, bool kvm) {
  auto cpu = domain.add("cpu");
  if (!p.cpu_model) {
    // KVM: the host's model, migratable. TCG: QEMU's default model (qemu64), which TCG
    // emulates in full; host-model would name the host's CPU, whose features TCG lacks.
    if (kvm) cpu.attr("mode", "host-model");
  } else if (*p.cpu_model == "host-model" || *p.cpu_model == "host-passthrough") {
    if (kvm) {
      cpu.attr("mode", *p.cpu_model);
    } else {
      cpu.comment("cpuModel " + *p.cpu_model +
                  " needs KVM: under TCG the CPU is QEMU's maximum, every feature it emulates");
      cpu.attr("mode", "maximum");
    }
  } else {
    cpu.attr("mode", "custom").attr("match", "exact");
    cpu.add("model").attr("fallback", "forbid").text(line("CPU model", *p.cpu_model));
  }
  cpu.add("topology")
      .attr("sockets", std::to_string(p.sockets))
      .attr("cores", std::to_string(p.cores))
      .attr("threads", "1");
  // vNUMA: the guest sees one NUMA cell holding its vCPUs and memory, backed by the host
  // nodes its pinned CPUs sit on (numatune).
  if (p.placement.vnuma && !p.placement.numa_nodes.empty()) {
    const auto vcpus = std::uint64_t{p.sockets} * p.cores;
    cpu.add("numa")
        .add("cell")
        .attr("id", "0")
        .attr("cpus", vcpus == 1 ? std::string("0") : "0-" + std::to_string(vcpus - 1))
        .attr("memory", std::to_string((p.memory_bytes + 1023) / 1024))
        .attr("unit", "KiB");
  }
}

std::string cpu_list(const std::vector<unsigned>& cpus) {
  std::string out;
  for (auto c : cpus) out += (out.empty() ? "" : ",") + std::to_string(c);
  return out;
}

// Dedicated CPU placement: each vCPU on its own host CPU, the emulator on another when the
// instance type isolates it, FIFO scheduling for realtime types.
void add_cputune(Node domain, const plan::Plan& p) {
  const auto& pl = p.placement;
  if (pl.vcpu_pins.empty()) return;
  auto tune = domain.add("cputune");
  for (std::size_t i = 0; i < pl.vcpu_pins.size(); ++i)
    tune.add("vcpupin")
        .attr("vcpu", std::to_string(i))
        .attr("cpuset", std::to_string(pl.vcpu_pins[i]));
  if (pl.emulator_pin) tune.add("emulatorpin").attr("cpuset", std::to_string(*pl.emulator_pin));
  if (pl.realtime)
    tune.add("vcpusched")
        .attr("vcpus", pl.vcpu_pins.size() == 1 ? std::string("0")
                                                : "0-" + std::to_string(pl.vcpu_pins.size() - 1))
        .attr("scheduler", "fifo")
        .attr("priority", "1");
  if (pl.vnuma && !pl.numa_nodes.empty())
    domain.add("numatune")
        .add("memory")
        .attr("mode", "strict")
        .attr("nodeset", cpu_list(pl.numa_nodes));
}

void add_os(Node domain, const plan::Plan& p) {
  auto os = domain.add("os");
  os.add("type")
      .attr("arch", "x86_64")
      .attr("machine", matching("machine type", p.machine, kMachine, "a machine type"))
      .text("hvm");
  const auto& fw = p.firmware;
  if (fw.bootloader == spec::Bootloader::Uefi) {
    os.add("loader")
        .attr("readonly", "yes")
        .attr("secure", fw.secure_boot ? "yes" : "no")
        .attr("type", "pflash")
        .text(absolute_path("UEFI loader", fw.loader));
    os.add("nvram")
        .attr("template", absolute_path("UEFI vars template", fw.vars_template))
        .text(absolute_path("NVRAM file", fw.nvram));
  } else if (fw.secure_boot) {
    fail("Secure Boot needs UEFI");
  }
  os.add("boot").attr("dev", "hd");
  os.add("smbios").attr("mode", "sysinfo");
}

void add_disk(Node devices, const plan::Disk& disk, const char* what) {
  static const std::set<std::string> kBuses{"virtio", "sata", "scsi", "usb"};
  if (!kBuses.contains(disk.bus))
    fail(std::string("the ") + what + " bus " + show(disk.bus) +
         " is not one of virtio, sata, scsi, usb");
  auto d = devices.add("disk");
  d.attr("type", "file").attr("device", "disk");
  d.add("driver").attr("name", "qemu").attr("type", "qcow2");
  d.add("source").attr("file", absolute_path(what, disk.path));
  d.add("target")
      .attr("dev", matching("disk target", disk.target, kTarget, "a disk target like vda or sdb"))
      .attr("bus", disk.bus);
}

// The seed cdrom's target: the first sdX no disk uses.
std::string seed_target(const std::set<std::string>& used) {
  for (char c = 'a'; c <= 'z'; ++c)
    if (std::string name = std::string("sd") + c; !used.contains(name)) return name;
  fail("no free sd target is left for the seed cdrom");
}

void add_hostdev(Node devices, const plan::HostDevice& h) {
  auto dev = devices.add("hostdev");
  dev.attr("mode", "subsystem");
  const auto out_of_range = [&] { fail("the host device " + show(h.text) + " is out of range"); };
  if (const auto* pci = std::get_if<spec::PciAddress>(&h.address)) {
    if (pci->domain > 0xFFFF || pci->bus > 0xFF || pci->slot > 0x1F || pci->function > 7)
      out_of_range();
    dev.attr("type", "pci").attr("managed", "yes");
    dev.add("source")
        .add("address")
        .attr("domain", fmt::format("0x{:04x}", pci->domain))
        .attr("bus", fmt::format("0x{:02x}", pci->bus))
        .attr("slot", fmt::format("0x{:02x}", pci->slot))
        .attr("function", fmt::format("0x{:x}", pci->function));
  } else if (const auto* usb = std::get_if<spec::UsbAddress>(&h.address)) {
    if (usb->bus > 999 || usb->device > 999) out_of_range();
    dev.attr("type", "usb").attr("managed", "yes");
    dev.add("source")
        .add("address")
        .attr("bus", std::to_string(usb->bus))
        .attr("device", std::to_string(usb->device));
  } else {
    const auto& id = std::get<spec::UsbId>(h.address);
    if (id.vendor > 0xFFFF || id.product > 0xFFFF) out_of_range();
    dev.attr("type", "usb").attr("managed", "yes");
    auto source = dev.add("source");
    source.add("vendor").attr("id", fmt::format("0x{:04x}", id.vendor));
    source.add("product").attr("id", fmt::format("0x{:04x}", id.product));
  }
}

// The disks: the overlay, the volumes, the seed cdrom; a virtio-scsi controller when one is on
// SCSI.
void add_disks(Node devices, const plan::Plan& p) {
  std::set<std::string> targets;
  bool scsi = false;
  const auto note_disk = [&](const plan::Disk& d) {
    if (!targets.insert(d.target).second) fail("two disks have the target " + show(d.target));
    scsi = scsi || d.bus == "scsi";
  };
  add_disk(devices, p.system_disk, "system disk");
  note_disk(p.system_disk);
  for (const auto& d : p.data_disks) {
    add_disk(devices, d, "data disk");
    note_disk(d);
  }
  auto seed = devices.add("disk");
  seed.attr("type", "file").attr("device", "cdrom");
  seed.add("driver").attr("name", "qemu").attr("type", "raw");
  seed.add("source").attr("file", absolute_path("seed ISO", p.seed_iso));
  // q35 has no IDE. SATA needs AHCI in the guest, which Debian's cloud kernel (genericcloud
  // images) lacks: the seed goes on virtio-scsi (virtio_scsi + sr_mod, which that kernel has),
  // unless the system disk is itself on SATA (a guest that we know drives AHCI).
  const std::string seed_bus = p.system_disk.bus == "sata" ? "sata" : "scsi";
  scsi = scsi || seed_bus == "scsi";
  seed.add("target").attr("dev", seed_target(targets)).attr("bus", seed_bus);
  seed.add("readonly");
  // Without this libvirt would add an LSI controller for SCSI disks.
  if (scsi) devices.add("controller").attr("type", "scsi").attr("model", "virtio-scsi");
}

// No spoofed MAC, IP or ARP, no DHCP server (nwfilter.hpp). The address is the NIC's own, or
// learnt from the lease its network's DHCP server gives (believing only those servers when the
// plan names them); until the guest has a lease it may send nothing but DHCP requests.
void add_filter(Node interface, const plan::Nic& nic) {
  auto filter = interface.add("filterref");
  filter.attr("filter", kTrafficFilter);
  const auto parameter = [&](const char* name, const std::string& value) {
    filter.add("parameter").attr("name", name).attr("value", value);
  };
  if (nic.ip) {
    parameter("IP", nic.ip->to_string());
    return;
  }
  parameter("CTRL_IP_LEARNING", "dhcp");
  for (const auto& server : nic.dhcp_servers) parameter("DHCPSERVER", server.to_string());
}

void add_interfaces(Node devices, const plan::Plan& p) {
  if (p.nics.empty()) fail("the plan has no network interface");
  for (const auto& nic : p.nics) {
    auto i = devices.add("interface");
    if (nic.type == plan::NicType::Bridge) {
      i.attr("type", "bridge");
      i.add("source").attr("bridge",
                           matching("bridge", nic.source, kBridge, "a bridge interface name"));
    } else {
      i.attr("type", "network");
      i.add("source").attr("network", line("network name", nic.source));
    }
    i.add("mac").attr("address",
                      matching("MAC address", nic.mac, kUnicastMac, "a unicast MAC address"));
    // A fixed host-side name, which bowline's guard filters by (engine/guest_guard.hpp).
    if (!nic.tap.empty())
      i.add("target").attr("dev", matching("tap device", nic.tap, kTap, "bw and 13 hex digits"));
    i.add("model").attr("type", matching("NIC model", nic.model, kNicModel, "a NIC model"));
    if (nic.filter == plan::NicFilter::Nwfilter) add_filter(i, nic);
  }
}

// The serial console (logged to a file) and the guest agent's channel.
void add_console(Node devices, const plan::Plan& p) {
  auto serial = devices.add("serial");
  serial.attr("type", "pty");
  serial.add("log").attr("file", absolute_path("console log", p.console_log)).attr("append", "off");
  serial.add("target").attr("port", "0");
  devices.add("console").attr("type", "pty").add("target").attr("type", "serial").attr("port", "0");
  devices.add("channel")
      .attr("type", "unix")
      .add("target")
      .attr("type", "virtio")
      .attr("name", "org.qemu.guest_agent.0");
}

// VNC with a tablet and a VGA card, or no video card at all. QEMU's VNC server listens on a
// UNIX socket that libvirt makes in the domain's private directory, never on a TCP port: the
// server opens the display through libvirt (virDomainOpenGraphicsFD), so no local account can
// reach it by port (`virsh domdisplay` still names the socket for root).
void add_display(Node devices, const plan::Plan& p) {
  if (p.display) {
    if (p.vnc_password.empty()) fail("the display is on but the plan has no VNC password");
    // An absolute pointer: the VNC cursor and the guest's stay together.
    devices.add("input").attr("type", "tablet").attr("bus", "usb");
    auto vnc = devices.add("graphics");
    vnc.attr("type", "vnc").attr("passwd", text("VNC password", p.vnc_password));
    vnc.add("listen").attr("type", "socket");
    devices.add("video").add("model").attr("type", "vga");
  } else {
    // No display, no video card: the serial console is the console (SeaBIOS and OVMF both
    // boot without one).
    devices.add("video").add("model").attr("type", "none");
  }
}

void add_devices(Node domain, const plan::Plan& p) {
  auto devices = domain.add("devices");
  add_disks(devices, p);
  add_interfaces(devices, p);
  add_console(devices, p);
  add_display(devices, p);
  for (const auto& h : p.host_devices) add_hostdev(devices, h);
  // The stats period makes the guest's balloon driver report its memory (available, unused,
  // page cache) every 10 s: what a space's memory use is read from (the stats sampler).
  // Free page reporting: the guest hands the pages it frees back to the host, which then
  // reads as zero, so a suspend saves only what the guest uses (and the host gets its memory
  // back from a guest that freed it). Not with passed-through devices: their DMA mappings
  // pin guest memory, so QEMU may not discard it.
  auto balloon = devices.add("memballoon");
  balloon.attr("model", "virtio");
  if (p.host_devices.empty()) balloon.attr("freePageReporting", "on");
  balloon.add("stats").attr("period", "10");
  devices.add("rng")
      .attr("model", "virtio")
      .add("backend")
      .attr("model", "random")
      .text("/dev/urandom");
}

// --- Reading -------------------------------------------------------------------------------

std::string_view prefix_of(std::string_view name) {
  const auto colon = name.find(':');
  return colon == std::string_view::npos ? std::string_view() : name.substr(0, colon);
}

std::string_view local_of(std::string_view name) {
  const auto colon = name.find(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

// The namespace URI an element's prefix is bound to, from its own or an ancestor's xmlns.
std::string_view namespace_of(pugi::xml_node node) {
  const auto prefix = prefix_of(node.name());
  const std::string declaration = prefix.empty() ? "xmlns" : "xmlns:" + std::string(prefix);
  for (auto n = node; n.type() == pugi::node_element; n = n.parent())
    if (auto a = n.attribute(declaration.c_str())) return a.value();
  return {};
}

bool is_ours(pugi::xml_node node) {
  return node.type() == pugi::node_element && local_of(node.name()) == kMetadataElement &&
         namespace_of(node) == kMetadataNamespace;
}

}  // namespace

DomainMetadata metadata_for(const plan::SpaceFacts& space, const plan::Owner& user) {
  return {space.id, space.name, space.template_id, space.template_name, user.username, user.id};
}

std::string render_domain_xml(const plan::Plan& p, const DomainMetadata& metadata) {
  const bool kvm = p.domain_type == plan::DomainType::Kvm;
  if (p.memory_bytes == 0) fail("the memory size is zero");
  const std::uint64_t vcpus = std::uint64_t{p.sockets} * p.cores;
  if (vcpus == 0 || vcpus > 65535) fail("the vCPU count " + std::to_string(vcpus) + " is invalid");
  const auto& fw = p.firmware;
  if (fw.secure_boot && !is_q35(p.machine))
    fail("Secure Boot needs a q35 machine, not " + show(p.machine));

  pugi::xml_document doc;
  Node domain(doc.append_child("domain"));
  domain.attr("type", kvm ? "kvm" : "qemu");
  for (const auto& note : p.notes) domain.comment(note);
  domain.add("name").text(line("domain name", p.domain_name));
  domain.add("uuid").text(matching("UUID", p.uuid, kUuid, "a UUID"));
  add_metadata(domain, metadata);

  // Memory in KiB, rounded up (to whole huge pages when backed by them).
  const auto page = page_kib(p.placement.hugepages_size);
  std::uint64_t kib = (p.memory_bytes + 1023) / 1024;
  if (page) kib = (kib + page - 1) / page * page;
  domain.add("memory").attr("unit", "KiB").text(std::to_string(kib));
  if (page)
    domain.add("memoryBacking")
        .add("hugepages")
        .add("page")
        .attr("size", std::to_string(page))
        .attr("unit", "KiB");
  domain.add("vcpu").text(std::to_string(vcpus));
  add_cputune(domain, p);

  domain.add("sysinfo")
      .attr("type", "smbios")
      .add("system")
      .add("entry")
      .attr("name", "uuid")
      .text(p.uuid);
  add_os(domain, p);

  auto features = domain.add("features");
  features.add("acpi");
  features.add("apic");
  // Secure Boot's variables are only safe from the guest OS in SMM; libvirt requires it.
  if (fw.smm || fw.secure_boot) features.add("smm").attr("state", "on");

  add_cpu(domain, p, kvm);

  // Restarts are the engine's decision (runStrategy): libvirt only stops the domain.
  domain.add("on_poweroff").text("destroy");
  domain.add("on_reboot").text("restart");
  domain.add("on_crash").text("destroy");

  add_devices(domain, p);

  std::ostringstream out;
  doc.save(out, "  ",
           pugi::format_indent | pugi::format_no_declaration | pugi::format_attribute_single_quote,
           pugi::encoding_utf8);
  return out.str();
}

std::optional<DomainMetadata> read_domain_metadata(std::string_view xml) {
  pugi::xml_document doc;
  if (!doc.load_buffer(xml.data(), xml.size(), pugi::parse_default, pugi::encoding_utf8))
    return std::nullopt;
  auto root = doc.document_element();
  pugi::xml_node space;
  if (is_ours(root)) {
    space = root;
  } else if (std::string_view(root.name()) == "domain") {
    for (auto child : root.child("metadata").children())
      if (is_ours(child)) space = child;
  }
  if (!space) return std::nullopt;

  const std::string prefix(prefix_of(space.name()));
  const auto child = [&](const char* local) {
    return space.child((prefix.empty() ? std::string(local) : prefix + ":" + local).c_str());
  };
  DomainMetadata m;
  m.space_id = child("id").text().get();
  m.space_name = child("name").text().get();
  m.template_id = child("template").attribute("id").value();
  m.template_name = child("template").text().get();
  m.owner_id = child("owner").attribute("id").value();
  m.owner = child("owner").text().get();
  return m;
}

}  // namespace bowline::libvirt
