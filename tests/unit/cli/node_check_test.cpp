// engine::check_node on fakes: libvirt's test driver with tests/data/libvirt/node.xml (networks,
// PCI and USB devices) behind a seam that answers domain capabilities like a real QEMU probe, a
// fake HostProbe for bridges, a scripted ProcessRunner for qemu-img, and temp directories for
// the images path's permission trap (a 0700 parent the QEMU user cannot enter).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "../common/scratch_files.hpp"
#include "cli/client_format.hpp"
#include "engine/node_check.hpp"
#include "libvirt/libvirt_hypervisor.hpp"
#include "libvirt/nwfilter.hpp"
#include "spec/loader.hpp"
#include "spec/validators.hpp"

namespace bowline::engine {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string read_data(const std::string& name) {
  std::ifstream in(std::string(BOWLINE_SOURCE_DIR) + "/tests/data/libvirt/" + name);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The test driver's host, except that QEMU "supports" every domain type (the test driver has
// no domain capabilities), networks can be added as defined-but-inactive, and network filters
// answer from `filters` unless `filters_work` is off (the test
// driver's own answer: not supported).
class TestHost final : public libvirt::Hypervisor {
 public:
  TestHost()
      : real_({.uri =
                   std::string("test://") + BOWLINE_SOURCE_DIR + "/tests/data/libvirt/node.xml"}) {}
  bool domain_type_supported = true;
  std::map<std::string, libvirt::NetworkInfo> extra_networks;
  bool filters_work = true;
  std::map<std::string, std::string> filters;
  bool one_lease_per_mac = true;

  std::string uri() const override { return real_.uri(); }
  libvirt::DomainInfo define(const std::string& xml) override { return real_.define(xml); }
  void start(const std::string& name, libvirt::StartOptions options) override {
    real_.start(name, options);
  }
  void resume(const std::string& name) override { real_.resume(name); }
  void shutdown(const std::string& name) override { real_.shutdown(name); }
  bool destroy(const std::string& name) override { return real_.destroy(name); }
  bool undefine(const std::string& name) override { return real_.undefine(name); }
  std::optional<libvirt::DomainInfo> lookup(const std::string& name) override {
    return real_.lookup(name);
  }
  std::vector<libvirt::DomainInfo> list() override { return real_.list(); }
  libvirt::DomainStatus state(const std::string& name) override { return real_.state(name); }
  void set_autostart(const std::string& name, bool on) override { real_.set_autostart(name, on); }
  std::string domain_xml(const std::string& name, bool inactive) override {
    return real_.domain_xml(name, inactive);
  }
  std::vector<libvirt::InterfaceAddress> interface_addresses(
      const std::string& name, libvirt::AddressSource source) override {
    return real_.interface_addresses(name, source);
  }
  std::string agent_command(const std::string& name, const std::string& json,
                            std::chrono::seconds timeout) override {
    return real_.agent_command(name, json, timeout);
  }
  libvirt::Subscription subscribe(libvirt::LifecycleCallback callback) override {
    return real_.subscribe(std::move(callback));
  }
  std::optional<libvirt::NetworkInfo> lookup_network(const std::string& name) override {
    if (auto it = extra_networks.find(name); it != extra_networks.end()) return it->second;
    auto info = real_.lookup_network(name);
    // As bowline's own networks are made: one lease per MAC (dhcp-ignore-clid).
    if (info) info->one_lease_per_mac = one_lease_per_mac;
    return info;
  }
  std::vector<libvirt::NetworkInfo> list_networks() override { return real_.list_networks(); }
  std::vector<libvirt::NodeDevice> node_devices() override { return real_.node_devices(); }
  std::optional<std::string> nwfilter_xml(const std::string& name) override {
    if (!filters_work) return real_.nwfilter_xml(name);
    const auto it = filters.find(name);
    return it == filters.end() ? std::nullopt : std::optional(it->second);
  }
  libvirt::DomainCapabilities domain_capabilities(const std::string& type) override {
    if (!domain_type_supported) return real_.domain_capabilities(type);
    auto caps = libvirt::parse_domain_capabilities(read_data("domcaps-qemu.xml"));
    caps.domain_type = type;
    return caps;
  }
  std::unique_ptr<util::ByteStream> open_console(const std::string& name, const std::string& device,
                                                 bool force) override {
    return real_.open_console(name, device, force);
  }

 private:
  libvirt::LibvirtHypervisor real_;
};

class FakeProbe final : public HostProbe {
 public:
  std::map<std::string, std::vector<std::string>> bridges;
  bool bridge_exists(const std::string& name) const override { return bridges.count(name) != 0; }
  std::vector<std::string> bridge_ports(const std::string& name) const override {
    const auto it = bridges.find(name);
    return it == bridges.end() ? std::vector<std::string>{} : it->second;
  }
};

class FakeRunner final : public util::ProcessRunner {
 public:
  util::ProcessResult answer{0, "qemu-img version 7.2.0 (Debian 1:7.2+dfsg-7)\nCopyright\n", "",
                             false};
  std::map<std::string, util::ProcessResult> answers;  // by program, before `answer`
  std::vector<std::vector<std::string>> calls;
  util::ProcessResult run(const std::vector<std::string>& argv,
                          std::chrono::milliseconds) override {
    calls.push_back(argv);
    const auto it = answers.find(argv.at(0));
    return it == answers.end() ? answer : it->second;
  }
};

// A temp directory removed at the end; `root` is 0755.
using test_support::TempDir;

const Check* find(const NodeReport& report, const std::string& name) {
  for (const auto& c : report.checks)
    if (c.name == name) return &c;
  return nullptr;
}

class NodeCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::permissions(temp.path(), fs::perms(0755));  // the QEMU user must traverse it
    images = temp.path() / "images";
    fs::create_directories(images);
    fs::permissions(images, fs::perms(0755));
    options.node_name = "test-node";
    options.domain_type = "qemu";
    options.images_path = images.string();
    options.qemu_users = {"nobody"};   // an unprivileged user every Linux host has
    options.kvm_device = "/dev/null";  // a character device anyone may open
    probe.bridges["br0"] = {"eth0", "vnet3"};
    context.hypervisor = &host;
    context.uri = host.uri();
    context.host = &probe;
    context.runner = &runner;
  }
  NodeReport run() { return check_node(options, context); }

  TempDir temp;
  fs::path images;
  TestHost host;
  FakeProbe probe;
  FakeRunner runner;
  NodeCheckOptions options;
  NodeCheckContext context;
};

TEST_F(NodeCheckTest, EveryRequiredCheckOkGivesTheKvmRuntime) {
  options.requirements.bridges = {"br0"};
  options.requirements.networks = {"default", "isolated"};
  spec::Device gpu;
  gpu.text = "pci_0000_01_00_0";
  gpu.address = spec::PciAddress{0, 1, 0, 0};
  options.requirements.devices = {gpu};
  const auto report = run();
  for (const auto& c : report.checks)
    EXPECT_EQ(c.status, CheckStatus::Ok) << c.name << ": " << c.detail << " / " << c.fix;
  EXPECT_TRUE(report.ready());
  EXPECT_EQ(report.runtimes, std::vector<std::string>{"kvm"});
  EXPECT_EQ(find(report, "kvm"), nullptr) << "/dev/kvm is checked only for domain type kvm";
  EXPECT_THAT(find(report, "qemu-img")->detail, HasSubstr("qemu-img version 7.2.0"));
  EXPECT_EQ(runner.calls, (std::vector<std::vector<std::string>>{{"qemu-img", "--version"},
                                                                 {"ebtables", "--version"}}));
  EXPECT_THAT(find(report, "domain-type")->detail, HasSubstr("/usr/bin/qemu-system-x86_64"));
  EXPECT_THAT(find(report, "bridge:br0")->detail, HasSubstr("eth0"));
  EXPECT_THAT(find(report, "network:default")->detail, HasSubstr("virbr0"));
  EXPECT_THAT(find(report, "device:pci_0000_01_00_0")->detail, HasSubstr("IOMMU group 1"));
  // GPU, its audio function, the host bridge (IOMMU group 0) and two USB devices; not the NIC.
  std::vector<std::string> names;
  for (const auto& d : report.passthrough_devices) names.push_back(d.name);
  EXPECT_THAT(names, ::testing::UnorderedElementsAre("pci_0000_00_00_0", "pci_0000_01_00_0",
                                                     "pci_0000_01_00_1", "usb_1_2", "usb_3_7"));
  EXPECT_THAT(find(report, "devices")->detail, HasSubstr("NVIDIA Corporation GA102GL [A10]"));
}

// A NAT network whose dnsmasq leases by client id is a warning with its fix; the node still
// runs spaces.
TEST_F(NodeCheckTest, ANetworkThatLeasesByClientIdIsAWarning) {
  options.requirements.networks = {"default"};
  host.one_lease_per_mac = false;
  const auto report = run();
  const auto* dhcp = find(report, "dhcp:default");
  ASSERT_NE(dhcp, nullptr);
  EXPECT_EQ(dhcp->status, CheckStatus::Warn);
  EXPECT_FALSE(dhcp->required);
  EXPECT_THAT(dhcp->fix, HasSubstr("dhcp-ignore-clid"));
  EXPECT_TRUE(report.ready());
}

TEST_F(NodeCheckTest, KvmDeviceOnlyForDomainTypeKvm) {
  options.domain_type = "kvm";
  auto report = run();
  ASSERT_NE(find(report, "kvm"), nullptr);
  EXPECT_EQ(find(report, "kvm")->status, CheckStatus::Ok) << find(report, "kvm")->detail;
  EXPECT_TRUE(report.ready());

  options.kvm_device = (temp.path() / "no-kvm").string();
  report = run();
  EXPECT_EQ(find(report, "kvm")->status, CheckStatus::Missing);
  EXPECT_THAT(find(report, "kvm")->detail, HasSubstr("does not exist"));
  EXPECT_THAT(find(report, "kvm")->fix, HasSubstr("--domain-type qemu"));
  EXPECT_FALSE(report.ready());
  EXPECT_THAT(report.runtimes, IsEmpty());

  const auto plain = temp.path() / "plain-file";
  std::ofstream(plain) << "x";
  options.kvm_device = plain.string();
  EXPECT_THAT(find(run(), "kvm")->detail, HasSubstr("not a character device"));
}

TEST_F(NodeCheckTest, LibvirtUnreachableFailsItAndWhatDependsOnIt) {
  context.hypervisor = nullptr;
  context.connect_error = "libvirt at \"qemu:///system\": cannot connect: no socket";
  options.requirements.networks = {"default"};
  const auto report = run();
  EXPECT_EQ(find(report, "libvirt")->status, CheckStatus::Missing);
  EXPECT_THAT(find(report, "libvirt")->detail, HasSubstr("no socket"));
  EXPECT_THAT(find(report, "libvirt")->fix, HasSubstr("libvirtd"));
  EXPECT_EQ(find(report, "domain-type")->status, CheckStatus::Missing);
  EXPECT_EQ(find(report, "network:default")->status, CheckStatus::Missing);
  EXPECT_FALSE(report.ready());
}

TEST_F(NodeCheckTest, QemuImgMissing) {
  runner.answer = {127, "", "qemu-img: No such file or directory", false};
  const auto report = run();
  EXPECT_EQ(find(report, "qemu-img")->status, CheckStatus::Missing);
  EXPECT_THAT(find(report, "qemu-img")->fix, HasSubstr("qemu-utils"));
  EXPECT_FALSE(report.ready());
}

TEST_F(NodeCheckTest, DomainTypeQemuCannotRun) {
  host.domain_type_supported = false;  // the test driver's own answer
  const auto report = run();
  EXPECT_EQ(find(report, "domain-type")->status, CheckStatus::Missing);
  EXPECT_THAT(find(report, "domain-type")->detail, HasSubstr("not supported"));
  EXPECT_FALSE(report.ready());
}

TEST_F(NodeCheckTest, BridgeMissingIsRequiredAndABridgeWithoutANicOnlyWarns) {
  probe.bridges["lonely"] = {};
  options.requirements.bridges = {"lonely"};
  auto report = run();
  const auto* lonely = find(report, "bridge:lonely");
  EXPECT_EQ(lonely->status, CheckStatus::Warn);
  EXPECT_FALSE(lonely->required);
  EXPECT_THAT(lonely->detail, HasSubstr("no enslaved NIC"));
  // Never the command that cuts a host off: enslaving the NIC that holds its address.
  EXPECT_THAT(lonely->fix, ::testing::Not(HasSubstr("master")));
  EXPECT_THAT(lonely->fix, HasSubstr("move the host's address from the NIC to the bridge"));
  EXPECT_THAT(lonely->fix, HasSubstr("fine for experiments"));
  EXPECT_TRUE(report.ready()) << "a bridge with no NIC warns but does not withhold the runtime";

  options.requirements.bridges = {"br9"};
  report = run();
  EXPECT_EQ(find(report, "bridge:br9")->status, CheckStatus::Missing);
  EXPECT_THAT(find(report, "bridge:br9")->fix, HasSubstr("ip link add br9 type bridge"));
  EXPECT_THAT(find(report, "bridge:br9")->fix, ::testing::Not(HasSubstr("master br9")));
  EXPECT_THAT(find(report, "bridge:br9")->fix, HasSubstr("from a console, not over SSH"));
  EXPECT_FALSE(report.ready());
}

TEST_F(NodeCheckTest, NatNetworksMustBeDefinedAndActive) {
  host.extra_networks["sleepy"] = {"sleepy", "", false, true, false, "virbr7"};
  options.requirements.networks = {"sleepy", "nowhere", "default"};
  const auto report = run();
  EXPECT_EQ(find(report, "network:sleepy")->status, CheckStatus::Missing);
  EXPECT_THAT(find(report, "network:sleepy")->detail, HasSubstr("not active"));
  EXPECT_THAT(find(report, "network:sleepy")->fix, HasSubstr("virsh net-start sleepy"));
  EXPECT_EQ(find(report, "network:nowhere")->status, CheckStatus::Missing);
  EXPECT_THAT(find(report, "network:nowhere")->fix, HasSubstr("virsh net-define"));
  EXPECT_EQ(find(report, "network:default")->status, CheckStatus::Ok);
  EXPECT_FALSE(report.ready());
}

TEST_F(NodeCheckTest, DevicesMustExistAndBePassthroughCapable) {
  spec::Device nic, gone, key;
  ASSERT_EQ(spec::parse_device("pci_0000_02_00_0", nic), "");
  nic.text = "pci_0000_02_00_0";
  ASSERT_EQ(spec::parse_device("pci_0000_09_00_0", gone), "");
  gone.text = "pci_0000_09_00_0";
  ASSERT_EQ(spec::parse_device("1050:0407", key), "");
  key.text = "1050:0407";
  options.requirements.devices = {nic, gone, key};
  const auto report = run();
  EXPECT_EQ(find(report, "device:pci_0000_02_00_0")->status, CheckStatus::Missing);
  EXPECT_THAT(find(report, "device:pci_0000_02_00_0")->detail, HasSubstr("no IOMMU group"));
  EXPECT_THAT(find(report, "device:pci_0000_02_00_0")->fix, HasSubstr("intel_iommu=on"));
  EXPECT_EQ(find(report, "device:pci_0000_09_00_0")->status, CheckStatus::Missing);
  EXPECT_THAT(find(report, "device:pci_0000_09_00_0")->detail, HasSubstr("no device"));
  EXPECT_EQ(find(report, "device:1050:0407")->status, CheckStatus::Ok);
  EXPECT_THAT(find(report, "device:1050:0407")->detail, HasSubstr("usb_1_2"));
  EXPECT_FALSE(report.ready());
}

TEST_F(NodeCheckTest, ThePermissionTrapAPrivateParentQemuCannotEnter) {
  // knot's "Permission denied": the images under a 0700 home directory.
  const auto home = temp.path() / "home-alice";
  const auto deep = home / "vms" / "images";
  fs::create_directories(deep);
  fs::permissions(home, fs::perms(0700));
  fs::permissions(home / "vms", fs::perms(0755));
  options.images_path = deep.string();
  auto report = run();
  const auto* check = find(report, "images-path");
  ASSERT_NE(check, nullptr);
  EXPECT_EQ(check->status, CheckStatus::Missing);
  EXPECT_THAT(check->detail, HasSubstr("cannot enter " + home.string()));
  EXPECT_THAT(check->detail, ::testing::Not(HasSubstr((home / "vms").string())));
  EXPECT_THAT(check->fix, HasSubstr("setfacl -m u:nobody:x " + home.string()));
  EXPECT_FALSE(report.ready());

  fs::permissions(home, fs::perms(0711));
  report = run();
  EXPECT_EQ(find(report, "images-path")->status, CheckStatus::Ok)
      << find(report, "images-path")->detail;
  EXPECT_TRUE(report.ready());
}

TEST_F(NodeCheckTest, TheSetfaclFixIsHonoured) {
  const auto home = temp.path() / "home-bob";
  const auto deep = home / "images";
  fs::create_directories(deep);
  fs::permissions(home, fs::perms(0700));
  const auto nobody = lookup_identity("nobody");
  ASSERT_TRUE(nobody);
  // What `setfacl -m u:nobody:x HOME` writes: user::rwx user:nobody:--x group::--- mask::--x
  // other::---, as the kernel's xattr layout (version 2, then {tag, perm, id} little-endian).
  std::vector<unsigned char> acl;
  auto put16 = [&](unsigned v) {
    acl.push_back(v & 255);
    acl.push_back((v >> 8) & 255);
  };
  auto put32 = [&](unsigned v) {
    put16(v & 0xffff);
    put16(v >> 16);
  };
  put32(2);
  const unsigned undefined = 0xffffffffu;
  put16(0x01), put16(7), put32(undefined);    // user::rwx
  put16(0x02), put16(1), put32(nobody->uid);  // user:nobody:--x
  put16(0x04), put16(0), put32(undefined);    // group::---
  put16(0x10), put16(1), put32(undefined);    // mask::--x
  put16(0x20), put16(0), put32(undefined);    // other::---
  if (::setxattr(home.c_str(), "system.posix_acl_access", acl.data(), acl.size(), 0) != 0)
    GTEST_SKIP() << "this filesystem takes no POSIX ACLs: " << std::strerror(errno);
  EXPECT_EQ(may_access(home.string(), *nobody, 1), true);
  EXPECT_EQ(may_access(home.string(), *nobody, 4), false);
  options.images_path = deep.string();
  EXPECT_EQ(find(run(), "images-path")->status, CheckStatus::Ok)
      << find(run(), "images-path")->detail;
}

// The base images are backing files QEMU opens: a library under a private home directory must
// fail the check, not the first boot.
TEST_F(NodeCheckTest, TheCloudImageLibraryAndBaseCacheMustBeReachableByQemu) {
  const auto home = temp.path() / "home-carol";
  fs::create_directories(home / "library");
  fs::create_directories(temp.path() / "cache");
  fs::permissions(temp.path() / "cache", fs::perms(0755));
  fs::permissions(home, fs::perms(0700));
  fs::permissions(home / "library", fs::perms(0755));
  options.cloud_image_path = (home / "library").string();
  options.base_image_path = (temp.path() / "cache").string();
  auto report = run();
  const auto* library = find(report, "cloud-image-path");
  ASSERT_NE(library, nullptr);
  EXPECT_EQ(library->status, CheckStatus::Missing);
  EXPECT_THAT(library->title, HasSubstr("cloud-image library"));
  EXPECT_THAT(library->detail, HasSubstr("cannot enter " + home.string()));
  EXPECT_THAT(library->fix, HasSubstr("setfacl -m u:nobody:x " + home.string()));
  EXPECT_THAT(library->fix, HasSubstr("server.kvm.cloud_image_path"));
  EXPECT_EQ(find(report, "base-image-path")->status, CheckStatus::Ok)
      << find(report, "base-image-path")->detail;
  EXPECT_FALSE(report.ready());

  fs::permissions(home, fs::perms(0711));
  report = run();
  EXPECT_EQ(find(report, "cloud-image-path")->status, CheckStatus::Ok);
  EXPECT_TRUE(report.ready());
}

// knot's cache layout (files named after the URL's last segment) gets a hint to adopt them;
// bowline's own layout and its sidecars get none.
TEST_F(NodeCheckTest, AKnotSeededCacheGetsAHintToAdoptItsFiles) {
  const auto cache = temp.path() / "cache";
  fs::create_directories(cache);
  options.base_image_path = cache.string();
  for (const char* name : {"0123456789abcdef-debian.qcow2", "0123456789abcdef-debian.qcow2.sha256",
                           "0123456789abcdef-debian.qcow2.url", "fedcba9876543210-alma.qcow2.part"})
    std::ofstream(cache / name) << "x";
  EXPECT_EQ(find(run(), "base-image-layout"), nullptr) << "bowline's own layout needs nothing";

  std::ofstream(cache / "ubuntu-24.04.img") << "x";
  std::ofstream(cache / "debian-12-genericcloud-amd64.qcow2") << "x";
  const auto report = run();
  const auto* hint = find(report, "base-image-layout");
  ASSERT_NE(hint, nullptr);
  EXPECT_EQ(hint->status, CheckStatus::Warn);
  EXPECT_FALSE(hint->required);
  EXPECT_THAT(hint->detail,
              HasSubstr("2 file(s) in " + cache.string() + " named after an URL's last segment"));
  EXPECT_THAT(hint->detail, HasSubstr("debian-12-genericcloud-amd64.qcow2, ubuntu-24.04.img"));
  EXPECT_THAT(hint->fix, HasSubstr("bowline image adopt " + cache.string() +
                                   "/debian-12-genericcloud-amd64.qcow2 --url URL"));
  EXPECT_TRUE(report.ready()) << "a hint, never a reason to withhold the runtime";
}

// domain type auto: the probe's verdict picks kvm or qemu and never withholds the runtime;
// an explicit kvm needs KVM to run.
TEST_F(NodeCheckTest, TheKvmProbeDecidesAutoAndIsRequiredForKvm) {
  KvmVerdict broken{false,
                    "QEMU could not start a KVM guest: qemu-system-x86_64: error: failed to set "
                    "MSR 0x10a to 0x69",
                    kvm_fix_for("failed to set MSR 0x10a")};
  context.kvm = &broken;
  options.domain_type = "auto";
  auto report = run();
  EXPECT_EQ(report.domain_type, "qemu");
  EXPECT_EQ(report.domain_type_setting, "auto");
  ASSERT_EQ(report.warnings.size(), 1u);
  EXPECT_THAT(report.warnings[0], HasSubstr("software emulation"));
  EXPECT_EQ(find(report, "kvm-runs")->status, CheckStatus::Warn);
  EXPECT_FALSE(find(report, "kvm-runs")->required);
  EXPECT_THAT(find(report, "kvm-runs")->fix, HasSubstr("software emulation"));
  EXPECT_TRUE(report.ready()) << "auto runs spaces under emulation";
  const auto json = to_json(report);
  EXPECT_EQ(json["domainType"], "qemu");
  EXPECT_EQ(json["warnings"].size(), 1u);
  EXPECT_THAT(cli::format_node_report(json), HasSubstr("warning: software emulation"));

  options.domain_type = "kvm";
  report = run();
  EXPECT_EQ(report.domain_type, "kvm");
  EXPECT_EQ(find(report, "kvm-runs")->status, CheckStatus::Missing);
  EXPECT_TRUE(find(report, "kvm-runs")->required);
  EXPECT_THAT(find(report, "kvm-runs")->detail, HasSubstr("failed to set MSR"));
  EXPECT_FALSE(report.ready());

  KvmVerdict works{true, "a KVM guest with the host-model CPU ran for 1.0 s", ""};
  context.kvm = &works;
  options.domain_type = "auto";
  report = run();
  EXPECT_EQ(report.domain_type, "kvm");
  EXPECT_THAT(report.warnings, IsEmpty());
  EXPECT_EQ(find(report, "kvm-runs")->status, CheckStatus::Ok);
  EXPECT_TRUE(report.ready());
}

// A NAT template with external ports needs a host that forwards IPv4.
TEST_F(NodeCheckTest, ExternalPortsNeedIpForwarding) {
  EXPECT_EQ(find(run(), "ip-forward"), nullptr) << "checked only when a template publishes ports";
  options.requirements.external_ports = true;
  options.ip_forward_file = (temp.path() / "ip_forward").string();
  std::ofstream(options.ip_forward_file) << "0\n";
  auto report = run();
  ASSERT_NE(find(report, "ip-forward"), nullptr);
  EXPECT_EQ(find(report, "ip-forward")->status, CheckStatus::Missing);
  EXPECT_THAT(find(report, "ip-forward")->fix, HasSubstr("sysctl -w net.ipv4.ip_forward=1"));
  EXPECT_FALSE(report.ready());
  std::ofstream(options.ip_forward_file) << "1\n";
  EXPECT_EQ(find(run(), "ip-forward")->status, CheckStatus::Ok);
}

TEST_F(NodeCheckTest, ImagesPathNotYetMadeWarns) {
  options.images_path = (temp.path() / "later" / "images").string();
  const auto report = run();
  EXPECT_EQ(find(report, "images-path")->status, CheckStatus::Warn);
  EXPECT_THAT(find(report, "images-path")->detail, HasSubstr("does not exist yet"));
  EXPECT_TRUE(report.ready());
}

TEST(NodeRequirements, FromTemplates) {
  NodeRequirements needs;
  for (const auto* name : {"bridged.yaml", "nat.yaml", "cozystack.yaml", "nat.yaml"}) {
    std::ifstream in(std::string(BOWLINE_SOURCE_DIR) + "/examples/" + name);
    std::ostringstream text;
    text << in.rdbuf();
    const auto loaded = spec::load_spec(text.str(), nullptr);
    ASSERT_TRUE(loaded.spec) << name;
    needs.add(*loaded.spec);
  }
  EXPECT_EQ(needs.bridges, std::vector<std::string>{"br0"});
  EXPECT_THAT(needs.networks, ::testing::Contains("default"));
  EXPECT_THAT(needs.networks, ::testing::Contains("storage-net"));
  EXPECT_EQ(std::count(needs.networks.begin(), needs.networks.end(), "default"), 1);
}

TEST(MayAccess, ModeBitsForOwnerGroupAndOther) {
  TempDir temp;
  fs::permissions(temp.path(), fs::perms(0755));
  const auto dir = temp.path() / "d";
  fs::create_directory(dir);
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  Identity owner{"owner", st.st_uid == 0 ? 12345u : st.st_uid, st.st_gid, {st.st_gid}};
  Identity stranger{"stranger", 54321, 54321, {54321}};
  Identity member{"member", 54322, 54322, {54322, static_cast<unsigned>(st.st_gid)}};
  // A uid of 0 is root: give the directory to the test's "owner" uid when the test runs as root.
  if (st.st_uid == 0 && ::chown(dir.c_str(), owner.uid, st.st_gid) != 0) GTEST_SKIP();
  fs::permissions(dir, fs::perms(0710));
  EXPECT_EQ(may_access(dir.string(), owner, 7), true);
  EXPECT_EQ(may_access(dir.string(), member, 1), true);
  EXPECT_EQ(may_access(dir.string(), member, 4), false);
  EXPECT_EQ(may_access(dir.string(), stranger, 1), false);
  fs::permissions(dir, fs::perms(0701));
  EXPECT_EQ(may_access(dir.string(), stranger, 1), true);
  EXPECT_EQ(may_access(dir.string(), member, 1), false) << "the group's bits decide for members";
  EXPECT_EQ(may_access((temp.path() / "nope").string(), stranger, 1), std::nullopt);
}

TEST(NodeReportJson, ShapeAndText) {
  NodeReport report;
  report.name = "n1";
  report.uri = "qemu:///system";
  report.domain_type = "qemu";
  Check ok;
  ok.name = "libvirt";
  ok.title = "libvirt reachable at qemu:///system";
  ok.detail = "connected";
  Check bad;
  bad.name = "bridge:br0";
  bad.title = "bridge br0 exists with a NIC";
  bad.status = CheckStatus::Missing;
  bad.detail = "no bridge br0 on this host";
  bad.fix = "ip link add br0 type bridge";
  report.checks = {ok, bad};
  const auto json = to_json(report);
  EXPECT_EQ(json["name"], "n1");
  EXPECT_EQ(json["runtimes"], nlohmann::ordered_json::array());
  EXPECT_EQ(json["ready"], false);
  EXPECT_EQ(json["checks"][1]["status"], "missing");
  EXPECT_EQ(json["checks"][1]["required"], true);
  EXPECT_EQ(json["checks"][1]["fix"], "ip link add br0 type bridge");
  EXPECT_EQ(cli::format_node_report(json),
            "node n1 (qemu:///system, domain type qemu)\n"
            "ok      libvirt reachable at qemu:///system: connected\n"
            "missing bridge br0 exists with a NIC: no bridge br0 on this host\n"
            "        fix: ip link add br0 type bridge\n"
            "not ready: 1 required check failed (bridge:br0)\n");
}

// --- nwfilter: guests cannot spoof (bowline-clean-traffic needs the driver and ebtables) -----

TEST_F(NodeCheckTest, NwfilterPassesWithTheDriverAndEbtables) {
  runner.answers["ebtables"] = {0, "ebtables 1.8.9 (nf_tables)\n", "", false};
  auto c = *find(run(), "nwfilter");
  EXPECT_EQ(c.status, CheckStatus::Ok) << c.detail;
  EXPECT_TRUE(c.required);
  EXPECT_THAT(c.detail, HasSubstr("the nwfilter driver answers"));
  EXPECT_THAT(c.detail, HasSubstr("bowline-clean-traffic is defined at the first start"));
  EXPECT_THAT(c.detail, HasSubstr("ebtables 1.8.9 (nf_tables)"));
  host.filters[libvirt::kTrafficFilter] = libvirt::traffic_filter_xml();
  c = *find(run(), "nwfilter");
  EXPECT_EQ(c.status, CheckStatus::Ok);
  EXPECT_THAT(c.detail, HasSubstr("bowline-clean-traffic defined"));
  host.filters[libvirt::kTrafficFilter] = "<filter name='bowline-clean-traffic' chain='root'/>";
  c = *find(run(), "nwfilter");
  EXPECT_EQ(c.status, CheckStatus::Ok);
  EXPECT_THAT(c.detail, HasSubstr("differs from this bowline's: redefined at the next start"));
}

// The hostile-guest rules: `ctest -L security` runs these.
using security_node_check = NodeCheckTest;

TEST_F(security_node_check, ALibvirtThatCannotFilterIsNotReady) {
  host.filters_work = false;
  context.uri = "qemu:///system";     // a real libvirt without the nwfilter driver
  options.guest_filter = "nwfilter";  // asked for: on this host the guard is the default
  const auto report = run();
  const auto& c = *find(report, "nwfilter");
  EXPECT_EQ(c.status, CheckStatus::Missing);
  EXPECT_TRUE(c.required);
  EXPECT_THAT(c.detail, HasSubstr("not supported"));
  EXPECT_THAT(c.fix, HasSubstr("nwfilter driver"));
  EXPECT_THAT(c.fix, HasSubstr("iptables"));
  EXPECT_FALSE(report.ready());
}

TEST_F(security_node_check, WithoutEbtablesTheNodeIsNotReady) {
  runner.answers["ebtables"] = {127, "", "ebtables: No such file or directory", false};
  const auto report = run();
  const auto c = *find(report, "nwfilter");
  EXPECT_EQ(c.status, CheckStatus::Missing);
  EXPECT_THAT(c.detail, HasSubstr("ebtables not found"));
  EXPECT_THAT(c.fix, HasSubstr("ebtables-nft"));
  EXPECT_FALSE(report.ready());
}

TEST_F(NodeCheckTest, NwfilterOnlyWarnsOnTheTestDriverAndRunsNoEbtablesForARemoteLibvirt) {
  host.filters_work = false;  // the test driver's own answer
  auto report = run();
  auto c = *find(report, "nwfilter");
  EXPECT_EQ(c.status, CheckStatus::Warn);
  EXPECT_FALSE(c.required);
  EXPECT_THAT(c.detail, HasSubstr("test driver"));
  EXPECT_TRUE(report.ready());

  host.filters_work = true;
  context.uri = "qemu+ssh://root@far-away/system";  // its ebtables is not this host's
  runner.calls.clear();
  c = *find(run(), "nwfilter");
  EXPECT_EQ(c.status, CheckStatus::Ok) << c.detail;
  EXPECT_EQ(runner.calls, (std::vector<std::vector<std::string>>{{"qemu-img", "--version"}}));

  context.hypervisor = nullptr;
  c = *find(run(), "nwfilter");
  EXPECT_EQ(c.status, CheckStatus::Missing);
  EXPECT_THAT(c.detail, HasSubstr("not reachable"));
}

// On this host's libvirt bowline's guard filters (unless nwfilter is asked for): the check is
// that nft runs, the kernel takes a bridge table (check mode: nothing is kept) and, for a
// server, that its table is there.
TEST_F(security_node_check, OnThisHostTheGuardIsCheckedAndNotTheNwfilterDriver) {
  host.filters_work = false;  // libvirt's filters do not matter here
  context.uri = "qemu:///system";
  runner.answers["nft"] = {0, "nftables v1.0.6 (Lester Gooch #5)\n", "", false};
  auto report = run();
  EXPECT_EQ(find(report, "nwfilter"), nullptr);
  auto c = *find(report, "guest-guard");
  EXPECT_EQ(c.status, CheckStatus::Ok) << c.detail;
  EXPECT_TRUE(c.required);
  EXPECT_EQ(c.detail, "nftables v1.0.6 (Lester Gooch #5)");
  EXPECT_TRUE(report.ready());
  const std::vector<std::string> check_mode{"nft", "-c", "add", "table", "bridge", "bowline_check"};
  EXPECT_NE(std::find(runner.calls.begin(), runner.calls.end(), check_mode), runner.calls.end());

  options.guard_table = "bowline_abc";
  runner.answers["nft"] = {
      0,
      "table bridge bowline_abc {\n elements = { \"bwabc0000000000\" : jump "
      "out_bwabc0000000000, \"bwabc0000000001\" : jump out_bwabc0000000001 }\n",
      "", false};
  c = *find(run(), "guest-guard");
  EXPECT_EQ(c.status, CheckStatus::Ok);
  EXPECT_THAT(c.detail, HasSubstr("table bridge bowline_abc guards 2 NICs"));
}

TEST_F(security_node_check, WithoutNftOrABridgeTableTheNodeIsNotReady) {
  context.uri = "qemu:///system";
  runner.answers["nft"] = {127, "", "nft: No such file or directory", false};
  auto report = run();
  auto c = *find(report, "guest-guard");
  EXPECT_EQ(c.status, CheckStatus::Missing);
  EXPECT_THAT(c.detail, HasSubstr("nft not found"));
  EXPECT_THAT(c.fix, HasSubstr("apt-get install nftables"));
  EXPECT_THAT(c.fix, HasSubstr("server.kvm.guest_filter nwfilter"));
  EXPECT_FALSE(report.ready());
  // nft runs, but the kernel has no nf_tables for bridges (every call answers the same here).
  runner.answers["nft"] = {1, "", "Error: Could not process rule: Operation not supported\n",
                           false};
  c = *find(run(), "guest-guard");
  EXPECT_EQ(c.status, CheckStatus::Missing);
  EXPECT_THAT(c.detail, HasSubstr("--version failed"));
}

}  // namespace
}  // namespace bowline::engine
