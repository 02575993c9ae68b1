// What LibvirtHypervisor reports about the host, on libvirt's test driver with the node file
// tests/data/libvirt/node.xml: networks, PCI and USB devices for passthrough checks, domain
// capabilities (the test driver has none; a real QEMU probe's XML is parsed from a file), and
// a connection that cannot be made.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libvirt/libvirt.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "hypervisor_test_support.hpp"
#include "libvirt/libvirt_hypervisor.hpp"

namespace bowline::libvirt {
namespace {

using namespace hvtest;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

std::string read_data(const std::string& name) {
  std::ifstream in(std::string(BOWLINE_SOURCE_DIR) + "/tests/data/libvirt/" + name);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

const NodeDevice* find(const std::vector<NodeDevice>& devices, const std::string& name) {
  const auto it = std::find_if(devices.begin(), devices.end(),
                               [&](const NodeDevice& d) { return d.name == name; });
  return it == devices.end() ? nullptr : &*it;
}

TEST(HypervisorHost, NodeDevicesForPassthroughChecks) {
  LibvirtHypervisor hv({.uri = node_uri()});
  const auto devices = hv.node_devices();
  std::vector<std::string> names;
  for (const auto& d : devices) names.push_back(d.name);
  EXPECT_THAT(names,
              UnorderedElementsAre("pci_0000_00_00_0", "pci_0000_01_00_0", "pci_0000_01_00_1",
                                   "pci_0000_02_00_0", "usb_1_2", "usb_3_7"));

  const auto* gpu = find(devices, "pci_0000_01_00_0");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->kind, NodeDeviceKind::Pci);
  EXPECT_EQ(gpu->parent, "pci_0000_00_00_0");
  EXPECT_EQ(gpu->vendor_id, 0x10deu);
  EXPECT_EQ(gpu->product_id, 0x2236u);
  EXPECT_EQ(gpu->vendor, "NVIDIA Corporation");
  EXPECT_EQ(gpu->product, "GA102GL [A10]");
  EXPECT_EQ(gpu->pci_class, 0x030000u);
  EXPECT_EQ(gpu->pci_domain, 0u);
  EXPECT_EQ(gpu->pci_bus, 1u);
  EXPECT_EQ(gpu->pci_slot, 0u);
  EXPECT_EQ(gpu->pci_function, 0u);
  EXPECT_EQ(gpu->iommu_group, 1u);
  EXPECT_TRUE(passthrough_capable(*gpu));

  const auto* audio = find(devices, "pci_0000_01_00_1");
  ASSERT_NE(audio, nullptr);
  EXPECT_EQ(audio->pci_function, 1u);
  EXPECT_EQ(audio->iommu_group, 1u) << "shares the GPU's group";

  const auto* nic = find(devices, "pci_0000_02_00_0");
  ASSERT_NE(nic, nullptr);
  EXPECT_FALSE(nic->iommu_group);
  EXPECT_FALSE(passthrough_capable(*nic)) << "no IOMMU group";

  const auto* key = find(devices, "usb_1_2");
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(key->kind, NodeDeviceKind::Usb);
  EXPECT_EQ(key->usb_bus, 1u);
  EXPECT_EQ(key->usb_device, 2u);
  EXPECT_EQ(key->vendor_id, 0x1050u);
  EXPECT_EQ(key->product_id, 0x0407u);
  EXPECT_EQ(key->product, "YubiKey OTP+FIDO+CCID");
  EXPECT_TRUE(passthrough_capable(*key));

  const auto* serial = find(devices, "usb_3_7");
  ASSERT_NE(serial, nullptr);
  EXPECT_EQ(serial->usb_bus, 3u);
  EXPECT_EQ(serial->usb_device, 7u);
}

TEST(HypervisorHost, NodeDeviceXmlParsing) {
  EXPECT_FALSE(parse_node_device("not xml"));
  EXPECT_FALSE(
      parse_node_device("<device><name>net_eth0</name><capability type='net'>"
                        "<interface>eth0</interface></capability></device>"));
  const auto bound = parse_node_device(
      "<device><name>pci_0000_01_00_0</name><parent>pci_0000_00_01_0</parent>"
      "<driver><name>vfio-pci</name></driver><capability type='pci'><class>0x030000</class>"
      "<domain>0</domain><bus>1</bus><slot>0</slot><function>0</function>"
      "<product id='0x2236'>GA102GL [A10]</product><vendor id='0x10de'>NVIDIA</vendor>"
      "<iommuGroup number='17'><address domain='0x0000' bus='0x01' slot='0x00' "
      "function='0x0'/></iommuGroup></capability></device>");
  ASSERT_TRUE(bound);
  EXPECT_EQ(bound->driver, "vfio-pci");
  EXPECT_EQ(bound->iommu_group, 17u);
  EXPECT_EQ(bound->vendor_id, 0x10deu);
  EXPECT_EQ(bound->pci_class, 0x030000u);
  const auto usb = parse_node_device(
      "<device><name>usb_2_14</name><driver><name>usb</name></driver>"
      "<capability type='usb_device'><bus>2</bus><device>14</device>"
      "<product id='0x0407'/><vendor id='0x1050'/></capability></device>");
  ASSERT_TRUE(usb);
  EXPECT_EQ(usb->kind, NodeDeviceKind::Usb);
  EXPECT_EQ(usb->usb_device, 14u);
  EXPECT_EQ(usb->driver, "usb");
  const auto bare = parse_node_device(
      "<device><name>pci_0000_03_00_0</name><capability type='pci'><domain>0</domain>"
      "<bus>3</bus><slot>0</slot><function>0</function></capability></device>");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->pci_bus, 3u);
  EXPECT_EQ(bare->vendor_id, 0u);
  EXPECT_FALSE(bare->iommu_group);
}

TEST(HypervisorHost, NetworksFromTheNodeFile) {
  LibvirtHypervisor hv({.uri = node_uri()});
  const auto network = hv.lookup_network("default");
  ASSERT_TRUE(network);
  EXPECT_EQ(network->name, "default");
  EXPECT_EQ(network->uuid, "11111111-2222-3333-4444-555555555555");
  EXPECT_TRUE(network->active);
  EXPECT_TRUE(network->persistent);
  EXPECT_EQ(network->bridge, "virbr0");
  EXPECT_TRUE(hv.network_exists("isolated"));
  EXPECT_TRUE(hv.network_active("isolated"));
  EXPECT_FALSE(hv.network_exists("nope"));
  EXPECT_FALSE(hv.network_active("nope"));

  std::vector<std::string> names;
  for (const auto& n : hv.list_networks()) names.push_back(n.name + "=" + n.bridge);
  EXPECT_THAT(names, UnorderedElementsAre("default=virbr0", "isolated=virbr9"));
}

TEST(HypervisorHost, ADefinedNetworkThatIsNotRunning) {
  // test:///default is shared within the process: define the network on a raw connection.
  LibvirtHypervisor hv({.uri = kDefaultUri});
  const std::string name = "bowline-stopped-" + std::to_string(::getpid());
  virConnectPtr raw = virConnectOpen(kDefaultUri);
  ASSERT_NE(raw, nullptr);
  const std::string xml = "<network><name>" + name +
                          "</name><bridge name='virbr42'/>"
                          "<ip address='198.51.100.1' netmask='255.255.255.0'/></network>";
  virNetworkPtr network = virNetworkDefineXML(raw, xml.c_str());
  ASSERT_NE(network, nullptr);

  EXPECT_TRUE(hv.network_exists(name));
  EXPECT_FALSE(hv.network_active(name));
  EXPECT_FALSE(hv.lookup_network(name)->active);

  virNetworkUndefine(network);
  virNetworkFree(network);
  virConnectClose(raw);
  EXPECT_FALSE(hv.network_exists(name));
}

TEST(HypervisorHost, DomainCapabilitiesTheDriverCannotProbeAreUnsupportedNotErrors) {
  LibvirtHypervisor hv({.uri = node_uri()});
  const auto caps = hv.domain_capabilities("kvm");
  EXPECT_FALSE(caps.supported);
  EXPECT_TRUE(caps.requires_kvm);
  EXPECT_EQ(caps.domain_type, "kvm");
  EXPECT_THAT(caps.reason, HasSubstr("not supported"));
  EXPECT_FALSE(hv.domain_capabilities("qemu").requires_kvm);
}

TEST(HypervisorHost, DomainCapabilitiesOfARealQemuProbe) {
  // Saved from `virsh domcapabilities --virttype qemu` on Debian 12 (QEMU 7.2, libvirt 9.0).
  const auto caps = parse_domain_capabilities(read_data("domcaps-qemu.xml"));
  EXPECT_TRUE(caps.supported);
  EXPECT_EQ(caps.domain_type, "qemu");
  EXPECT_FALSE(caps.requires_kvm);
  EXPECT_EQ(caps.emulator, "/usr/bin/qemu-system-x86_64");
  EXPECT_EQ(caps.arch, "x86_64");
  EXPECT_THAT(caps.machine, StartsWith("pc-"));
  EXPECT_EQ(caps.max_vcpus, 255u);
  EXPECT_THAT(caps.firmware, Contains("efi"));

  const auto broken = parse_domain_capabilities("<oops");
  EXPECT_FALSE(broken.supported);
  EXPECT_FALSE(broken.reason.empty());
}

TEST(HypervisorHost, AConnectionThatCannotBeMadeSaysWhere) {
  try {
    LibvirtHypervisor hv({.uri = "test:///nonexistent/bowline/node.xml"});
    ADD_FAILURE() << "connected to a missing file";
  } catch (const HypervisorError& e) {
    EXPECT_THAT(
        e.what(),
        StartsWith("libvirt at \"test:///nonexistent/bowline/node.xml\": cannot connect: "));
    EXPECT_NE(e.code(), 0);
  }
}

TEST(HypervisorHost, UriIsTheOneGiven) {
  LibvirtHypervisor hv({.uri = node_uri()});
  EXPECT_EQ(hv.uri(), node_uri());
}

}  // namespace
}  // namespace bowline::libvirt
