// environment (KEY=value) and devices (knot's passthrough forms).
#include <gtest/gtest.h>

#include <string>

#include "spec_test_support.hpp"

namespace bowline::spec {
namespace {

using test::ErrorCount;
using test::HasError;
using test::load;
using test::Valid;

// Entries of `key` start on line 4, each at column 5.
LoadResult list(const char* key, const std::string& entries) {
  return load("image: debian-12\nnetwork: {mode: nat}\n" + std::string(key) + ":\n" + entries);
}

TEST(Environment, KeyValuePairs) {
  const auto r = list("environment", R"(  - EDITOR=vim
  - _X1=a=b=c
  - EMPTY=
  - "SPACED=  two words  "
)");
  ASSERT_TRUE(Valid(r));
  const auto& env = r.spec->environment;
  ASSERT_EQ(env.size(), 4u);
  EXPECT_EQ(env[0].name, "EDITOR");
  EXPECT_EQ(env[0].value, "vim");
  EXPECT_EQ(env[1].name, "_X1");
  EXPECT_EQ(env[1].value, "a=b=c");
  EXPECT_EQ(env[2].value, "");
  EXPECT_EQ(env[3].value, "  two words  ");
}

TEST(Environment, EntryWithoutEquals) {
  const auto r = list("environment", "  - EDITOR=vim\n  - FOO\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "environment[1]", 5, 5, "\"FOO\" must be KEY=value"));
}

TEST(Environment, KeyRules) {
  const auto r = list("environment", R"(  - 1X=a
  - A-B=c
  - =x
  - "É=1"
  - A.B=1
)");
  ASSERT_TRUE(ErrorCount(r, 5));
  EXPECT_TRUE(HasError(r, "environment[0]", 4, 5, "\"1X\" must not start with a digit"));
  EXPECT_TRUE(HasError(r, "environment[1]", 5, 5,
                       "\"A-B\" is not a variable name: letters, digits and '_' only"));
  EXPECT_TRUE(
      HasError(r, "environment[2]", 6, 5, "the variable name is empty (expected KEY=value)"));
  EXPECT_TRUE(HasError(r, "environment[3]", 7, 5, "is not a variable name"));
  EXPECT_TRUE(HasError(r, "environment[4]", 8, 5, "\"A.B\" is not a variable name"));
}

// Found by tests/unit/api/hostile_inputs_test.cpp: a NUL in a value passed validation and the
// template was stored; only writing the seed refused it, so every space of it failed to start.
TEST(Environment, ANulInAValueIsRefusedWhenTheTemplateIsRead) {
  const auto r = list("environment", "  - \"A=x\\0y\"\n  - \"B=line\\nbreak\"\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(
      HasError(r, "environment[0]", 4, 5, "A holds a NUL character, which a shell cannot carry"));
}

TEST(Environment, DuplicateKey) {
  const auto r = list("environment", "  - A=1\n  - B=2\n  - A=3\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "environment[2]", 6, 5, "A is already set by environment[0]"));
}

TEST(Environment, Shapes) {
  auto r = load("image: debian-12\nnetwork: {mode: nat}\nenvironment: A=1\n");
  EXPECT_TRUE(HasError(r, "environment", 3, 14, "expected a list, got a single value"));
  r = list("environment", "  - A: 1\n");
  EXPECT_TRUE(HasError(r, "environment[0]", 4, 5, "expected a single value, got a mapping"));
  r = load("image: debian-12\nnetwork: {mode: nat}\nenvironment: {A: 1}\n");
  EXPECT_TRUE(HasError(r, "environment", 3, 14, "expected a list, got a mapping"));
}

TEST(Devices, TheThreeForms) {
  const auto r = list("devices", R"(  - pci_0000_01_00_0
  - PCI_ABCD_0a_1f_7
  - usb_002_003
  - usb_1_12
  - 10de:2684
  - 0x8086:0x1234
  - 0X1:0Xf
)");
  ASSERT_TRUE(Valid(r));
  const auto& d = r.spec->devices;
  ASSERT_EQ(d.size(), 7u);
  EXPECT_EQ(d[0].kind(), DeviceKind::Pci);
  EXPECT_EQ(d[0].text, "pci_0000_01_00_0");
  EXPECT_EQ(std::get<PciAddress>(d[0].address).bus, 1u);
  EXPECT_EQ(d[1].kind(), DeviceKind::Pci);
  EXPECT_EQ(std::get<PciAddress>(d[1].address), (PciAddress{0xabcd, 0x0a, 0x1f, 7}));
  EXPECT_EQ(d[2].kind(), DeviceKind::Usb);
  EXPECT_EQ(std::get<UsbAddress>(d[2].address), (UsbAddress{2, 3}));
  EXPECT_EQ(std::get<UsbAddress>(d[3].address).device, 12u);
  EXPECT_EQ(d[4].kind(), DeviceKind::VendorProduct);
  EXPECT_EQ(std::get<UsbId>(d[4].address), (UsbId{0x10de, 0x2684}));
  EXPECT_EQ(std::get<UsbId>(d[5].address), (UsbId{0x8086, 0x1234}));
  EXPECT_EQ(std::get<UsbId>(d[6].address), (UsbId{1, 15}));
}

TEST(Devices, BadPciAddresses) {
  for (const char* d : {"pci_0000_01_00", "pci_0000_01_20_0", "pci_0000_01_00_8", "pci_zz_01_00_0",
                        "pci_00000_01_00_0", "pci_0000_1_00_0", "pci_0000_01_00_0_0"}) {
    SCOPED_TRACE(d);
    const auto r = list("devices", std::string("  - ") + d + "\n");
    ASSERT_TRUE(ErrorCount(r, 1));
    EXPECT_TRUE(HasError(r, "devices[0]", 4, 5,
                         std::string("\"") + d +
                             "\" must be a PCI address like pci_0000_01_00_0 "
                             "(domain_bus_slot_function in hex)"));
  }
}

TEST(Devices, BadUsbPairs) {
  for (const char* d : {"usb_2", "usb_0002_003", "usb_a_b", "usb_2_3_4", "usb__3"}) {
    SCOPED_TRACE(d);
    const auto r = list("devices", std::string("  - ") + d + "\n");
    ASSERT_TRUE(ErrorCount(r, 1));
    EXPECT_TRUE(
        HasError(r, "devices[0]", 4, 5,
                 std::string("\"") + d + "\" must be a USB bus.device pair like usb_002_003"));
  }
}

TEST(Devices, AnythingElse) {
  for (const char* d : {"bogus", "8086:", ":1234", "12345:1", "0x:1", "8086:12:34", "/dev/sda"}) {
    SCOPED_TRACE(d);
    const auto r = list("devices", std::string("  - '") + d + "'\n");
    ASSERT_TRUE(ErrorCount(r, 1));
    EXPECT_TRUE(HasError(r, "devices[0]", 4, 5,
                         "must be a PCI address (pci_0000_01_00_0), a USB pair (usb_002_003) or "
                         "a vendor:product pair (0x8086:0x1234)"));
  }
}

TEST(Devices, ListedTwice) {
  const auto r = list("devices",
                      "  - pci_0000_01_00_0\n  - PCI_0000_01_00_0\n  - 10de:2684\n"
                      "  - 0x10DE:0x2684\n");
  ASSERT_TRUE(ErrorCount(r, 2));
  EXPECT_TRUE(HasError(r, "devices[1]", 5, 5, "\"PCI_0000_01_00_0\" is listed twice"));
  EXPECT_TRUE(HasError(r, "devices[3]", 7, 5, "\"0x10DE:0x2684\" is listed twice"));
}

TEST(Devices, Shapes) {
  const auto r = load("image: debian-12\nnetwork: {mode: nat}\ndevices: pci_0000_01_00_0\n");
  EXPECT_TRUE(HasError(r, "devices", 3, 10, "expected a list, got a single value"));
}

}  // namespace
}  // namespace bowline::spec
