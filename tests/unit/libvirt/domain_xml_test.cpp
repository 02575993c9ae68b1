// Tests for the domain XML renderer. Golden files pin the exact bytes of two realistic plans;
// libvirt's own schema (virt-xml-validate, libvirt-clients) is the oracle that every document
// we produce, hostile values included, is one libvirt accepts; pugixml reads the documents
// back to check that values survive escaping unchanged.
// BOWLINE_UPDATE_GOLDEN=1 rewrites the golden files from the current output.
#include "libvirt/domain_xml.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <pugixml.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "spec/loader.hpp"

namespace bowline::libvirt {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// --- Helpers -------------------------------------------------------------------------------

const fs::path kGoldenDir = fs::path(BOWLINE_SOURCE_DIR) / "tests/unit/libvirt/golden";

struct Validation {
  int status = -1;
  std::string output;
};

// Runs `virt-xml-validate FILE domain` on the document.
Validation validate(const std::string& xml) {
  std::string path = (fs::temp_directory_path() / "bowline-domain-XXXXXX").string();
  const int fd = mkstemp(path.data());
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  close(fd);
  std::ofstream(path, std::ios::binary) << xml;
  Validation v;
  const std::string command = "virt-xml-validate '" + path + "' domain 2>&1";
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) v.output.append(buffer, n);
    const int status = pclose(pipe);
    v.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  fs::remove(path);
  return v;
}

#define EXPECT_VALID(xml)                                                \
  do {                                                                   \
    const std::string doc_ = (xml);                                      \
    const auto v_ = validate(doc_);                                      \
    EXPECT_EQ(v_.status, 0) << v_.output << "\n--- document:\n" << doc_; \
  } while (0)

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void expect_golden(const std::string& name, const std::string& xml) {
  const auto path = kGoldenDir / name;
  if (const char* update = getenv("BOWLINE_UPDATE_GOLDEN"); update && *update == '1') {
    fs::create_directories(kGoldenDir);
    std::ofstream(path, std::ios::binary) << xml;
  }
  ASSERT_TRUE(fs::exists(path)) << path << " is missing; run with BOWLINE_UPDATE_GOLDEN=1";
  EXPECT_EQ(xml, read_file(path)) << "rendering differs from " << path;
}

pugi::xml_document parse(const std::string& xml) {
  pugi::xml_document doc;
  const auto result = doc.load_string(xml.c_str(), pugi::parse_default | pugi::parse_comments);
  EXPECT_TRUE(result) << result.description() << "\n" << xml;
  return doc;
}

std::string at(const pugi::xml_document& doc, const char* xpath) {
  const auto found = doc.select_node(xpath);
  if (!found) return "<none>";
  return found.attribute() ? found.attribute().value() : found.node().text().get();
}

std::size_t count(const pugi::xml_document& doc, const char* xpath) {
  return doc.select_nodes(xpath).size();
}

std::vector<std::string> comments(const pugi::xml_document& doc) {
  std::vector<std::string> out;
  for (const auto& found : doc.select_nodes("//comment()")) out.push_back(found.node().value());
  return out;
}

spec::Spec load(const std::string& yaml,
                spec::Variables vars = {{"user.username", "alice"}, {"space.name", "dev"}}) {
  auto result = spec::load_spec(yaml, &vars);
  for (const auto& d : result.diagnostics.items()) ADD_FAILURE() << spec::format(d, "spec");
  if (!result.spec) throw std::runtime_error("the spec did not load");
  return *result.spec;
}

plan::Owner alice() {
  return {"alice",
          "alice@example.org",
          "Europe/Berlin",
          "u-1",
          plan::password_hash("s3cret", "space-1"),
          {}};
}

plan::SpaceFacts facts() {
  plan::SpaceFacts f;
  f.id = "3b1f7c52-9a0e-4d8b-8f4e-2c6d1a9e5b70";
  f.name = "dev";
  f.ip = spec::Ipv4Address::parse("198.51.100.10");
  f.uuid = "0f0e0d0c-0b0a-4908-9706-050403020100";
  f.vnc_password = "abcdefgh";
  f.template_name = "debian";
  f.template_id = "tpl-7";
  return f;
}

plan::NodeSettings node(plan::DomainType type) {
  plan::NodeSettings n;
  n.domain_type = type;
  return n;
}

const char* kBiosBridged = R"(
name: ${{ .user.username }}-${{ .space.name }}
hostname: ${{ .space.name }}
image: debian-12
memory: 1G
cpus: 2
network: {mode: bridged, cidr: 198.51.100.0/24, bridge: testbr0, gateway: 198.51.100.1}
)";

const char* kUefiEverything = R"(
name: ${{ .user.username }}-${{ .space.name }}
hostname: ${{ .space.name }}
image: debian-12
instanceType: cx1.medium
firmware: {bootloader: uefi, secureBoot: true, efiPersistent: true}
network: {mode: nat, bridge: default}
networks: [{name: storage-net}]
disks: [{name: scratch}, {name: legacy, bus: sata}]
devices: [pci_0000_01_00_0, usb_002_003, "046d:c52b"]
gpus: [{name: pci_0000_41_00_1}, {name: nvidia.com/GA102GL_A10}]
display: true
)";

plan::Plan bios_bridged_plan() {
  return plan::make_plan(load(kBiosBridged), alice(), facts(), node(plan::DomainType::Qemu));
}

plan::Plan uefi_plan() {
  return plan::make_plan(load(kUefiEverything), alice(), facts(), node(plan::DomainType::Kvm));
}

// A plan built by hand, every field set, for the variations below.
plan::Plan hand_plan() {
  plan::Plan p;
  p.domain_name = "alice-dev";
  p.guest.hostname = "dev";
  p.uuid = "0f0e0d0c-0b0a-4908-9706-050403020100";
  p.domain_type = plan::DomainType::Qemu;
  p.memory_bytes = 256ull << 20;
  p.space_dir = "/var/lib/bowline/alice-dev";
  p.system_disk = {p.space_dir + "/disk.qcow2", "virtio", "vda"};
  p.seed_iso = p.space_dir + "/seed.iso";
  p.console_log = p.space_dir + "/console.log";
  p.nics = {{plan::NicType::Bridge, "testbr0", "52:54:00:12:34:56", "virtio"}};
  p.vnc_password = "abcdefgh";
  return p;
}

// --- Golden files --------------------------------------------------------------------------

TEST(DomainXml, BiosBridgedMatchesGoldenAndValidates) {
  const auto xml = render_domain_xml(bios_bridged_plan(), metadata_for(facts(), alice()));
  expect_golden("bios-bridged.xml", xml);
  EXPECT_VALID(xml);
}

TEST(DomainXml, UefiSecureBootPersistentMatchesGoldenAndValidates) {
  const auto p = uefi_plan();
  // The plan this golden file pins: what the test claims to cover is really in it.
  ASSERT_TRUE(p.firmware.secure_boot);
  ASSERT_FALSE(p.firmware.reset_nvram_on_start);
  ASSERT_EQ(p.placement.hugepages_size, "2Mi");
  ASSERT_EQ(p.host_devices.size(), 4u);
  ASSERT_EQ(p.nics.size(), 2u);
  ASSERT_EQ(p.data_disks.size(), 2u);
  ASSERT_TRUE(p.display);
  const auto xml = render_domain_xml(p, metadata_for(facts(), alice()));
  expect_golden("uefi-secure-boot.xml", xml);
  EXPECT_VALID(xml);
}

TEST(DomainXml, SamePlanGivesSameBytes) {
  const auto meta = metadata_for(facts(), alice());
  EXPECT_EQ(render_domain_xml(uefi_plan(), meta), render_domain_xml(uefi_plan(), meta));
  EXPECT_EQ(render_domain_xml(bios_bridged_plan(), meta),
            render_domain_xml(bios_bridged_plan(), meta));
}

TEST(DomainXml, IndentsByTwoSpacesWithoutDeclaration) {
  const auto xml = render_domain_xml(hand_plan());
  EXPECT_TRUE(xml.starts_with("<domain type='qemu'>\n  <name>alice-dev</name>\n")) << xml;
  EXPECT_TRUE(xml.ends_with("</domain>\n"));
  EXPECT_THAT(xml, Not(HasSubstr("\t")));
}

// --- What the document says ----------------------------------------------------------------

TEST(DomainXml, BiosBridgedContents) {
  const auto doc = parse(render_domain_xml(bios_bridged_plan()));
  EXPECT_EQ(at(doc, "/domain/@type"), "qemu");
  EXPECT_EQ(at(doc, "/domain/name"), "alice-dev");
  EXPECT_EQ(at(doc, "/domain/uuid"), "0f0e0d0c-0b0a-4908-9706-050403020100");
  EXPECT_EQ(at(doc, "/domain/sysinfo[@type='smbios']/system/entry[@name='uuid']"),
            "0f0e0d0c-0b0a-4908-9706-050403020100");
  EXPECT_EQ(at(doc, "/domain/os/smbios/@mode"), "sysinfo");
  EXPECT_EQ(at(doc, "/domain/memory"), "1048576");
  EXPECT_EQ(at(doc, "/domain/memory/@unit"), "KiB");
  EXPECT_EQ(at(doc, "/domain/vcpu"), "2");
  EXPECT_EQ(at(doc, "/domain/cpu/topology/@sockets"), "1");
  EXPECT_EQ(at(doc, "/domain/cpu/topology/@cores"), "2");
  EXPECT_EQ(at(doc, "/domain/cpu/topology/@threads"), "1");
  EXPECT_EQ(count(doc, "/domain/cpu/@mode"), 0u);  // TCG: QEMU's default model
  EXPECT_EQ(at(doc, "/domain/os/type/@machine"), "q35");
  EXPECT_EQ(count(doc, "/domain/os/loader"), 0u);
  EXPECT_EQ(count(doc, "/domain/features/acpi"), 1u);
  EXPECT_EQ(count(doc, "/domain/features/apic"), 1u);
  EXPECT_EQ(count(doc, "/domain/features/smm"), 0u);
  EXPECT_EQ(at(doc, "/domain/os/boot/@dev"), "hd");
  EXPECT_EQ(at(doc, "/domain/on_poweroff"), "destroy");
  EXPECT_EQ(at(doc, "/domain/on_reboot"), "restart");
  EXPECT_EQ(at(doc, "/domain/on_crash"), "destroy");

  EXPECT_EQ(at(doc, "//disk[@device='disk']/driver/@type"), "qcow2");
  EXPECT_EQ(at(doc, "//disk[@device='disk']/source/@file"),
            "/var/lib/libvirt/images/bowline/alice-dev/disk.qcow2");
  EXPECT_EQ(at(doc, "//disk[@device='disk']/target/@dev"), "vda");
  EXPECT_EQ(at(doc, "//disk[@device='cdrom']/driver/@type"), "raw");
  // The seed on virtio-scsi: Debian's cloud kernel has no AHCI, q35 no IDE.
  EXPECT_EQ(at(doc, "//disk[@device='cdrom']/target/@bus"), "scsi");
  EXPECT_EQ(at(doc, "//disk[@device='cdrom']/target/@dev"), "sda");
  EXPECT_EQ(at(doc, "//controller[@type='scsi']/@model"), "virtio-scsi");
  EXPECT_EQ(count(doc, "//disk[@device='cdrom']/readonly"), 1u);

  EXPECT_EQ(at(doc, "//interface/@type"), "bridge");
  EXPECT_EQ(at(doc, "//interface/source/@bridge"), "testbr0");
  EXPECT_EQ(at(doc, "//interface/mac/@address"), plan::mac_for(facts().id, 0));
  EXPECT_EQ(at(doc, "//interface/model/@type"), "virtio");

  EXPECT_EQ(at(doc, "//serial[@type='pty']/log/@file"),
            "/var/lib/libvirt/images/bowline/alice-dev/console.log");
  EXPECT_EQ(at(doc, "//serial/log/@append"), "off");
  EXPECT_EQ(at(doc, "//console[@type='pty']/target/@type"), "serial");
  EXPECT_EQ(at(doc, "//channel[@type='unix']/target/@name"), "org.qemu.guest_agent.0");
  EXPECT_EQ(at(doc, "//rng[@model='virtio']/backend[@model='random']"), "/dev/urandom");
  EXPECT_EQ(at(doc, "//memballoon/@model"), "virtio");
  // The guest's balloon driver reports its memory every 10 s (the stats sampler reads it).
  EXPECT_EQ(at(doc, "//memballoon/stats/@period"), "10");
  // Freed guest pages go back to the host: a suspend saves only what the guest uses.
  EXPECT_EQ(at(doc, "//memballoon/@freePageReporting"), "on");

  // No display: no graphics, no video card, no tablet.
  EXPECT_EQ(count(doc, "//graphics"), 0u);
  EXPECT_EQ(count(doc, "//input"), 0u);
  EXPECT_EQ(at(doc, "//video/model/@type"), "none");
}

TEST(DomainXml, UefiContents) {
  const auto p = uefi_plan();
  const auto doc = parse(render_domain_xml(p));
  EXPECT_EQ(at(doc, "/domain/@type"), "kvm");
  EXPECT_EQ(at(doc, "/domain/os/loader"), "/usr/share/OVMF/OVMF_CODE_4M.secboot.fd");
  EXPECT_EQ(at(doc, "/domain/os/loader/@secure"), "yes");
  EXPECT_EQ(at(doc, "/domain/os/loader/@readonly"), "yes");
  EXPECT_EQ(at(doc, "/domain/os/loader/@type"), "pflash");
  EXPECT_EQ(at(doc, "/domain/os/nvram"), "/var/lib/libvirt/images/bowline/alice-dev/nvram.fd");
  EXPECT_EQ(at(doc, "/domain/os/nvram/@template"), "/usr/share/OVMF/OVMF_VARS_4M.ms.fd");
  EXPECT_EQ(at(doc, "/domain/features/smm/@state"), "on");
  EXPECT_EQ(at(doc, "/domain/cpu/@mode"), "host-model");
  EXPECT_EQ(at(doc, "/domain/memoryBacking/hugepages/page/@size"), "2048");
  EXPECT_EQ(at(doc, "/domain/memoryBacking/hugepages/page/@unit"), "KiB");
  EXPECT_EQ(at(doc, "/domain/memory"), "2097152");

  // Data disks after the overlay; the seed takes the first free sd name.
  EXPECT_EQ(count(doc, "//disk[@device='disk']"), 3u);
  EXPECT_EQ(at(doc, "//disk[target/@dev='vdb']/source/@file"),
            "/var/lib/libvirt/images/bowline/volumes/scratch.qcow2");
  EXPECT_EQ(at(doc, "//disk[target/@dev='sda']/target/@bus"), "sata");
  EXPECT_EQ(at(doc, "//disk[@device='cdrom']/target/@dev"), "sdb");
  EXPECT_EQ(at(doc, "//disk[@device='cdrom']/target/@bus"), "scsi");

  EXPECT_EQ(count(doc, "//interface[@type='network']"), 2u);
  EXPECT_EQ(at(doc, "//interface[2]/source/@network"), "storage-net");
  EXPECT_EQ(at(doc, "//interface[2]/mac/@address"), plan::mac_for(facts().id, 1));

  EXPECT_EQ(count(doc, "//hostdev[@type='pci'][@managed='yes']"), 2u);
  const auto pci = doc.select_node("//hostdev[@type='pci']/source/address").node();
  EXPECT_STREQ(pci.attribute("domain").value(), "0x0000");
  EXPECT_STREQ(pci.attribute("bus").value(), "0x01");
  EXPECT_STREQ(pci.attribute("slot").value(), "0x00");
  EXPECT_STREQ(pci.attribute("function").value(), "0x0");
  EXPECT_EQ(at(doc, "//hostdev[@type='pci'][2]/source/address/@bus"), "0x41");
  EXPECT_EQ(at(doc, "//hostdev[@type='pci'][2]/source/address/@function"), "0x1");
  EXPECT_EQ(at(doc, "//hostdev[@type='usb']/source/address/@bus"), "2");
  EXPECT_EQ(at(doc, "//hostdev[@type='usb']/source/address/@device"), "3");
  EXPECT_EQ(at(doc, "//hostdev[@type='usb']/source/vendor/@id"), "0x046d");
  EXPECT_EQ(at(doc, "//hostdev[@type='usb']/source/product/@id"), "0xc52b");
  // Passed-through devices pin guest memory for DMA: no free page reporting beside them.
  EXPECT_EQ(count(doc, "//memballoon[@freePageReporting]"), 0u);

  EXPECT_EQ(at(doc, "//graphics/@type"), "vnc");
  EXPECT_EQ(at(doc, "//graphics/@passwd"), "abcdefgh");
  // VNC on a UNIX socket only: no TCP listen address, no port.
  EXPECT_EQ(count(doc, "//graphics/listen"), 1u);
  EXPECT_EQ(at(doc, "//graphics/listen/@type"), "socket");
  EXPECT_EQ(count(doc, "//graphics[@listen or @port or @autoport]"), 0u);
  EXPECT_EQ(count(doc, "//graphics/listen[@address or @network]"), 0u);
  EXPECT_EQ(at(doc, "//video/model/@type"), "vga");
  EXPECT_EQ(at(doc, "//input/@type"), "tablet");

  // Every note as a comment; unplaced, nothing is pinned.
  const auto found = comments(doc);
  for (const auto& note : p.notes)
    EXPECT_THAT(found, ::testing::Contains(" " + note + " ")) << note;
  EXPECT_EQ(found.size(), p.notes.size());
  EXPECT_EQ(doc.select_nodes("//cputune").size(), 0u);
}

// What the node placed at start: each vCPU on its own host CPU, the emulator on another, FIFO
// for realtime, the guest's NUMA cell on the host nodes of those CPUs; the notes that said it
// was missing are gone.
TEST(DomainXml, DedicatedCpusAreRenderedOncePlaced) {
  auto p = hand_plan();
  p.sockets = 1;
  p.cores = 2;
  p.placement.dedicated_cpu = true;
  p.placement.isolate_emulator_thread = true;
  p.placement.vnuma = true;
  p.placement.realtime = true;
  p.notes = {"dedicated CPU placement: none", "vNUMA: none", "realtime vCPUs: none"};
  spec::Spec spec;
  plan::place(p, spec, {{4, 5, 7}, {1}, {}});
  EXPECT_TRUE(p.notes.empty());
  const auto doc = parse(render_domain_xml(p));
  EXPECT_EQ(at(doc, "//cputune/vcpupin[@vcpu='0']/@cpuset"), "4");
  EXPECT_EQ(at(doc, "//cputune/vcpupin[@vcpu='1']/@cpuset"), "5");
  EXPECT_EQ(at(doc, "//cputune/emulatorpin/@cpuset"), "7");
  EXPECT_EQ(at(doc, "//cputune/vcpusched/@scheduler"), "fifo");
  EXPECT_EQ(at(doc, "//cputune/vcpusched/@vcpus"), "0-1");
  EXPECT_EQ(at(doc, "//numatune/memory/@nodeset"), "1");
  EXPECT_EQ(at(doc, "//cpu/numa/cell/@cpus"), "0-1");
  EXPECT_EQ(at(doc, "//cpu/numa/cell/@memory"), std::to_string((p.memory_bytes + 1023) / 1024));
  EXPECT_VALID(render_domain_xml(p));
  EXPECT_THROW(plan::place(p, spec, {{4, 5}, {}, {}}), std::invalid_argument)
      << "two CPUs for two vCPUs and an isolated emulator thread";
}

TEST(DomainXml, MemoryRoundsUpToKibAndToHugePages) {
  auto p = hand_plan();
  p.memory_bytes = 1;
  EXPECT_EQ(at(parse(render_domain_xml(p)), "/domain/memory"), "1");
  p.memory_bytes = 1025;
  EXPECT_EQ(at(parse(render_domain_xml(p)), "/domain/memory"), "2");
  p.memory_bytes = (1ull << 30) + 1;
  p.placement.hugepages_size = "1Gi";
  const auto doc = parse(render_domain_xml(p));
  EXPECT_EQ(at(doc, "/domain/memory"), "2097152");
  EXPECT_EQ(at(doc, "/domain/memoryBacking/hugepages/page/@size"), "1048576");
  EXPECT_VALID(render_domain_xml(p));
}

struct CpuCase {
  plan::DomainType type;
  std::optional<std::string> model;
  const char* mode;   // "" when absent
  const char* named;  // the <model>, "" when absent
};

TEST(DomainXml, CpuModeByDomainTypeAndModel) {
  using plan::DomainType;
  const CpuCase cases[] = {
      {DomainType::Kvm, std::nullopt, "host-model", ""},
      {DomainType::Qemu, std::nullopt, "", ""},
      {DomainType::Kvm, "host-model", "host-model", ""},
      {DomainType::Kvm, "host-passthrough", "host-passthrough", ""},
      {DomainType::Qemu, "host-model", "maximum", ""},
      {DomainType::Qemu, "host-passthrough", "maximum", ""},
      {DomainType::Kvm, "EPYC-Rome", "custom", "EPYC-Rome"},
      {DomainType::Qemu, "qemu64", "custom", "qemu64"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(plan::to_string(c.type)) + " " + c.model.value_or("(none)"));
    auto p = hand_plan();
    p.domain_type = c.type;
    p.cpu_model = c.model;
    p.sockets = 2;
    p.cores = 3;
    const auto xml = render_domain_xml(p);
    const auto doc = parse(xml);
    EXPECT_EQ(at(doc, "/domain/cpu/@mode"), *c.mode ? c.mode : "<none>");
    if (*c.named) {
      EXPECT_EQ(at(doc, "/domain/cpu/model"), c.named);
      EXPECT_EQ(at(doc, "/domain/cpu/@match"), "exact");
      EXPECT_EQ(at(doc, "/domain/cpu/model/@fallback"), "forbid");
    } else {
      EXPECT_EQ(count(doc, "/domain/cpu/model"), 0u);
    }
    EXPECT_EQ(at(doc, "/domain/vcpu"), "6");
    EXPECT_EQ(at(doc, "/domain/cpu/topology/@sockets"), "2");
    EXPECT_EQ(at(doc, "/domain/cpu/topology/@cores"), "3");
    EXPECT_VALID(xml);
  }
}

TEST(DomainXml, FirmwareAndDeviceVariationsValidate) {
  auto p = hand_plan();
  p.firmware.bootloader = spec::Bootloader::Uefi;
  p.firmware.loader = "/usr/share/OVMF/OVMF_CODE_4M.fd";
  p.firmware.vars_template = "/usr/share/OVMF/OVMF_VARS_4M.fd";
  p.firmware.nvram = p.space_dir + "/nvram.fd";
  {
    const auto xml = render_domain_xml(p);
    const auto doc = parse(xml);
    EXPECT_EQ(at(doc, "/domain/os/loader/@secure"), "no");
    EXPECT_EQ(count(doc, "/domain/features/smm"), 0u);
    EXPECT_VALID(xml);
  }
  // SMM from a preference, without Secure Boot.
  p.firmware.smm = true;
  EXPECT_EQ(at(parse(render_domain_xml(p)), "/domain/features/smm/@state"), "on");

  // SCSI disks get a virtio-scsi controller; usb disks just validate.
  p.system_disk = {p.space_dir + "/disk.qcow2", "scsi", "sda"};
  p.data_disks = {{"/v/a.qcow2", "usb", "sdb"}, {"/v/b.qcow2", "virtio", "vda"}};
  p.nics.push_back({plan::NicType::Network, "default", "52:54:00:00:00:02", "e1000"});
  p.display = true;
  const auto xml = render_domain_xml(p);
  const auto doc = parse(xml);
  EXPECT_EQ(at(doc, "//controller[@type='scsi']/@model"), "virtio-scsi");
  EXPECT_EQ(at(doc, "//disk[@device='cdrom']/target/@dev"), "sdc");
  EXPECT_EQ(at(doc, "//interface[2]/model/@type"), "e1000");
  EXPECT_VALID(xml);
}

TEST(DomainXml, SeedFollowsASataSystemDisk) {
  auto p = hand_plan();
  p.system_disk = {p.space_dir + "/disk.qcow2", "sata", "sda"};
  const auto xml = render_domain_xml(p);
  const auto doc = parse(xml);
  EXPECT_EQ(at(doc, "//disk[@device='cdrom']/target/@bus"), "sata");
  EXPECT_EQ(at(doc, "//disk[@device='cdrom']/target/@dev"), "sdb");
  EXPECT_EQ(count(doc, "//controller"), 0u);
  EXPECT_VALID(xml);
}

// The oracle itself: a document libvirt's schema refuses is reported as such.
TEST(DomainXml, ValidatorRejectsInvalidDocuments) {
  const auto xml = render_domain_xml(hand_plan());
  auto broken = xml;
  broken.replace(broken.find("alice-dev</name>"), 9, "alice\ndev");
  EXPECT_NE(validate(broken).status, 0);
  auto bad_mac = xml;
  bad_mac.replace(bad_mac.find("52:54:00:12:34:56"), 2, "53");
  EXPECT_NE(validate(bad_mac).status, 0);
  EXPECT_NE(validate("<domain type='qemu'><name>x</name><bogus/></domain>").status, 0);
}

// --- Hostile values ------------------------------------------------------------------------

TEST(DomainXml, HostileValuesAreEscapedAndValidate) {
  auto p = hand_plan();
  const std::string evil = "a'b\"c<d>e&f]]>g";
  p.domain_name = "x" + evil;
  p.guest.hostname = "host\nname'<&";  // not part of the domain XML, and breaks nothing
  p.space_dir = "/var/lib/bowline/" + evil + " dir";
  p.system_disk.path = p.space_dir + "/disk.qcow2";
  p.seed_iso = p.space_dir + "/seed&.iso";
  p.console_log = p.space_dir + "/console'.log";
  p.firmware.bootloader = spec::Bootloader::Uefi;
  p.firmware.loader = "/fw/" + evil + "/code.fd";
  p.firmware.vars_template = "/fw/" + evil + "/vars.fd";
  p.firmware.nvram = p.space_dir + "/nvram.fd";
  p.nics.push_back({plan::NicType::Network, "net" + evil, "52:54:00:00:00:02", "virtio"});
  p.cpu_model = "model" + evil;
  p.display = true;
  p.vnc_password = "p'\"<&>\n\tw";
  static const char kControl[] =
      "control \x01\x1b chars, a NUL \0 here, bad UTF-8 \xff\xc3z, good UTF-8 \xc3\xa9";
  p.notes = {
      "a note -- with dashes --> and <!-- and ]]> and & and <tags>",
      "multi\nline\r\nnote",
      "ends with a dash -",
      "---",
      std::string(kControl, sizeof kControl - 1),
      "",
  };
  DomainMetadata meta{"id'\"<&\n", "name\n<x>", "tid&", "tname--", "owner<>", "oid\"'"};

  const auto xml = render_domain_xml(p, meta);
  EXPECT_VALID(xml);
  EXPECT_THAT(xml, Not(HasSubstr(evil)));

  // Every value reads back exactly as it was.
  const auto doc = parse(xml);
  EXPECT_EQ(at(doc, "/domain/name"), p.domain_name);
  EXPECT_EQ(at(doc, "//disk[@device='disk']/source/@file"), p.system_disk.path);
  EXPECT_EQ(at(doc, "//disk[@device='cdrom']/source/@file"), p.seed_iso);
  EXPECT_EQ(at(doc, "//serial/log/@file"), p.console_log);
  EXPECT_EQ(at(doc, "/domain/os/loader"), p.firmware.loader);
  EXPECT_EQ(at(doc, "/domain/os/nvram/@template"), p.firmware.vars_template);
  EXPECT_EQ(at(doc, "//interface[2]/source/@network"), p.nics[1].source);
  EXPECT_EQ(at(doc, "/domain/cpu/model"), *p.cpu_model);
  EXPECT_EQ(at(doc, "//graphics/@passwd"), p.vnc_password);
  EXPECT_EQ(read_domain_metadata(xml), meta);

  // One comment per note, none of them broken, text kept where XML allows it.
  const auto found = comments(doc);
  ASSERT_EQ(found.size(), p.notes.size());
  for (const auto& c : found) EXPECT_THAT(c, Not(HasSubstr("--")));
  EXPECT_EQ(found[0], " a note - - with dashes - -> and <!- - and ]]> and & and <tags> ");
  EXPECT_EQ(found[1], " multi\nline \nnote ");
  EXPECT_EQ(found[2], " ends with a dash - ");
  EXPECT_EQ(found[3], " - - - ");
  EXPECT_EQ(found[4], " control ?? chars, a NUL ? here, bad UTF-8 ??z, good UTF-8 \xc3\xa9 ");
}

TEST(DomainXml, RefusesValuesLibvirtWouldReject) {
  const auto refused = [](const char* what, auto change, const char* message) {
    SCOPED_TRACE(what);
    auto p = hand_plan();
    change(p);
    try {
      const auto xml = render_domain_xml(p);
      ADD_FAILURE() << "rendered:\n" << xml;
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr(message));
    }
  };
  refused(
      "newline in a path", [](plan::Plan& p) { p.system_disk.path += "\nx"; }, "line break");
  refused(
      "newline in the name", [](plan::Plan& p) { p.domain_name = "a\nb"; }, "line break");
  refused(
      "relative path", [](plan::Plan& p) { p.seed_iso = "seed.iso"; }, "absolute path");
  refused(
      "control character", [](plan::Plan& p) { p.domain_name = "a\x01"; }, "control");
  refused(
      "bad UTF-8", [](plan::Plan& p) { p.console_log = "/a\xff"; }, "UTF-8");
  refused(
      "empty name", [](plan::Plan& p) { p.domain_name.clear(); }, "is empty");
  refused(
      "bad UUID", [](plan::Plan& p) { p.uuid = "not-a-uuid"; }, "UUID");
  refused(
      "multicast MAC", [](plan::Plan& p) { p.nics[0].mac = "01:00:5e:00:00:01"; }, "MAC");
  refused(
      "bad bridge", [](plan::Plan& p) { p.nics[0].source = "br'0"; }, "bridge");
  refused(
      "unknown bus", [](plan::Plan& p) { p.system_disk.bus = "ide"; }, "bus");
  refused(
      "duplicate target",
      [](plan::Plan& p) {
        p.data_disks = {{"/v/a.qcow2", "virtio", "vda"}};
      },
      "target");
  refused(
      "no memory", [](plan::Plan& p) { p.memory_bytes = 0; }, "memory");
  refused(
      "no vCPUs", [](plan::Plan& p) { p.cores = 0; }, "vCPU");
  refused(
      "no NIC", [](plan::Plan& p) { p.nics.clear(); }, "network interface");
  refused(
      "display without password",
      [](plan::Plan& p) {
        p.display = true;
        p.vnc_password.clear();
      },
      "VNC password");
  refused(
      "secure boot on i440fx",
      [](plan::Plan& p) {
        p.firmware.secure_boot = true;
        p.machine = "pc";
      },
      "q35");
  refused(
      "secure boot on BIOS", [](plan::Plan& p) { p.firmware.secure_boot = true; }, "UEFI");
  refused(
      "odd hugepages", [](plan::Plan& p) { p.placement.hugepages_size = "4Ki"; }, "hugepages");
  refused(
      "PCI slot out of range",
      [](plan::Plan& p) {
        p.host_devices = {{"pci_0000_00_20_0", spec::PciAddress{0, 0, 0x20, 0}}};
      },
      "out of range");
}

// --- Metadata ------------------------------------------------------------------------------

TEST(DomainMetadata, RoundTripsAndMarksTheDomain) {
  const auto meta = metadata_for(facts(), alice());
  EXPECT_EQ(meta.space_id, facts().id);
  EXPECT_EQ(meta.template_id, "tpl-7");
  EXPECT_EQ(meta.owner, "alice");
  EXPECT_EQ(meta.owner_id, "u-1");
  const auto xml = render_domain_xml(hand_plan(), meta);
  EXPECT_THAT(xml, HasSubstr("<bowline:space xmlns:bowline='https://bowline.dev/xmlns/space/1'>"));
  EXPECT_EQ(read_domain_metadata(xml), meta);

  // Empty metadata: the element is still there, so the domain is still recognisably ours.
  EXPECT_EQ(read_domain_metadata(render_domain_xml(hand_plan())), DomainMetadata{});
}

TEST(DomainMetadata, ReadsByNamespaceNotPrefix) {
  // As virDomainGetMetadata returns it, under another prefix.
  EXPECT_EQ(read_domain_metadata("<b:space xmlns:b=\"https://bowline.dev/xmlns/space/1\">"
                                 "<b:id>s1</b:id><b:owner id=\"u\">bob</b:owner></b:space>"),
            (DomainMetadata{"s1", "", "", "", "bob", "u"}));
  // A default namespace.
  EXPECT_EQ(read_domain_metadata("<domain><metadata><space "
                                 "xmlns='https://bowline.dev/xmlns/space/1'><name>n</name></space>"
                                 "</metadata></domain>"),
            (DomainMetadata{"", "n", "", "", "", ""}));
}

TEST(DomainMetadata, OthersAreNotOurs) {
  EXPECT_EQ(read_domain_metadata("<domain><name>x</name></domain>"), std::nullopt);
  EXPECT_EQ(read_domain_metadata("<domain><metadata><bowline:space xmlns:bowline='urn:other'/>"
                                 "</metadata></domain>"),
            std::nullopt);
  EXPECT_EQ(read_domain_metadata("<domain><metadata><bowline:space/></metadata></domain>"),
            std::nullopt);
  EXPECT_EQ(read_domain_metadata("not xml <"), std::nullopt);
  EXPECT_EQ(read_domain_metadata(""), std::nullopt);
}

}  // namespace
}  // namespace bowline::libvirt
