#include "engine/placement.hpp"

#include "engine/devices.hpp"
#include "spec/validators.hpp"

#include <gtest/gtest.h>

namespace bowline::engine {
namespace {

TEST(CpuList, RangesAndSingles) {
  EXPECT_EQ(parse_cpu_list("2-4,7, 9"), (std::vector<unsigned>{2, 3, 4, 7, 9}));
  EXPECT_EQ(parse_cpu_list("3,3"), (std::vector<unsigned>{3}));
  for (const char* bad : {"", "a", "4-2", "1-", "-1", "1,,2", "0x2", "12345"})
    EXPECT_THROW(parse_cpu_list(bad), std::invalid_argument) << bad;
}

TEST(Held, PinsAndPciDevicesOfADomain) {
  Held held;
  add_held(held, R"(<domain><cputune><vcpupin vcpu='0' cpuset='4'/><emulatorpin cpuset='6'/>
    <vcpupin vcpu='1' cpuset='0-3,^2'/></cputune><devices>
    <hostdev mode='subsystem' type='pci'><source><address domain='0x0000' bus='0x41' slot='0x00'
    function='0x1'/></source></hostdev><hostdev type='usb'/></devices></domain>)");
  EXPECT_EQ(held.cpus, (std::set<unsigned>{4, 6})) << "another tool's form is not read as ours";
  EXPECT_EQ(held.pci, (std::set<std::string>{"0000:41:00.1"}));
  EXPECT_EQ(choose_cpus({3, 4, 5, 6, 7}, held, 3), (std::vector<unsigned>{3, 5, 7}));
  EXPECT_FALSE(choose_cpus({4, 5, 6}, held, 2));
}

TEST(ResourceName, AsTheDevicePluginsNameTheirDevices) {
  libvirt::NodeDevice gpu;
  gpu.kind = libvirt::NodeDeviceKind::Pci;
  gpu.vendor_id = 0x10de;
  gpu.product = "GA102GL [A10]";
  EXPECT_EQ(resource_name(gpu), "nvidia.com/GA102GL_A10");
  gpu.vendor_id = 0x1af4;  // virtio: no device plugin names it
  EXPECT_FALSE(resource_name(gpu));
}

// One matcher for create checks, node check and placement: vendor:product names a USB device
// (a hostdev of type usb), never a PCI one with the same ids.
TEST(DeviceMatcher, AddressesAndUsbIds) {
  libvirt::NodeDevice pci;
  pci.kind = libvirt::NodeDeviceKind::Pci;
  pci.pci_bus = 1;
  pci.vendor_id = 0x10de;
  pci.product_id = 0x2236;
  libvirt::NodeDevice usb;
  usb.kind = libvirt::NodeDeviceKind::Usb;
  usb.usb_bus = 2;
  usb.usb_device = 3;
  usb.vendor_id = 0x1050;
  usb.product_id = 0x0407;
  auto device = [](const char* text) {
    spec::Device d;
    EXPECT_EQ(spec::parse_device(text, d), "") << text;
    return d;
  };
  EXPECT_TRUE(matches(device("pci_0000_01_00_0"), pci));
  EXPECT_FALSE(matches(device("pci_0000_02_00_0"), pci));
  EXPECT_TRUE(matches(device("usb_002_003"), usb));
  EXPECT_FALSE(matches(device("usb_002_003"), pci));
  EXPECT_TRUE(matches(device("1050:0407"), usb));
  EXPECT_FALSE(matches(device("10de:2236"), pci)) << "vendor:product is a USB device";
}

}  // namespace
}  // namespace bowline::engine
