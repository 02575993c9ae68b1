// The VM's size: knot's memory/disk/cpus, Cozystack's resources and instanceType, the rules
// between them, and the preference's minimum.
#include <gtest/gtest.h>

#include <string>

#include "spec_test_support.hpp"

namespace bowline::spec {
namespace {

using test::ErrorCount;
using test::HasError;
using test::HasWarning;
using test::load;
using test::Valid;

constexpr std::uint64_t kKiB = 1ull << 10;
constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kGiB = 1ull << 30;
constexpr std::uint64_t kTiB = 1ull << 40;

// The base takes lines 1-2; `extra` starts on line 3.
LoadResult with(const std::string& extra) {
  return load("image: debian-12\nnetwork: {mode: nat}\n" + extra);
}

// memory and disk

TEST(Memory, BinaryUnitsWithOptionalIAndB) {
  for (const char* m : {"4G", "4Gi", "4GiB", "4GB", "4g", "4gib", "'4 GiB'", "4096M", "4194304K"}) {
    SCOPED_TRACE(m);
    const auto r = with(std::string("memory: ") + m + "\n");
    ASSERT_TRUE(Valid(r));
    EXPECT_EQ(r.spec->memory_bytes, 4 * kGiB);
    EXPECT_EQ(r.spec->sizing.memory_bytes, 4 * kGiB);
    EXPECT_EQ(r.spec->sizing.source, SizingSource::Knot);
  }
  auto r = with("memory: 1T\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->memory_bytes, kTiB);
  r = with("memory: 512MiB\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->memory_bytes, 512 * kMiB);
}

TEST(Memory, BareNumberIsBytesAndOneMebibyteIsTheMinimum) {
  auto r = with("memory: 1048576\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->memory_bytes, kMiB);
  r = with("memory: 1024K\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->memory_bytes, kMiB);
  r = with("memory: 1048575\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "memory", 3, 9, "below 1 MiB: a bare number is bytes"));
  r = with("memory: 1023K\n");
  EXPECT_TRUE(HasError(r, "memory", 3, 9, "below 1 MiB"));
}

TEST(Memory, TwoThousandFortyEightIsRefusedWithTheKnotExplanation) {
  const auto r = with("memory: 2048\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "memory", 3, 9,
                       "a bare number is bytes, so \"memory: 2048\" asks for 2048 bytes. Write a "
                       "unit: 2048M or 2G (knot would silently give 512M here; bowline refuses)"));
}

TEST(Memory, ZeroIsBelowTheMinimum) {
  EXPECT_TRUE(HasError(with("memory: 0\n"), "memory", 3, 9, "below 1 MiB"));
}

TEST(Memory, DecimalsAreRejected) {
  for (const char* m : {"1.5G", "0.5G", "4.0G"}) {
    SCOPED_TRACE(m);
    const auto r = with(std::string("memory: ") + m + "\n");
    ASSERT_TRUE(ErrorCount(r, 1));
    EXPECT_TRUE(HasError(r, "memory", 3, 9,
                         "has a fraction: sizes are whole numbers; use a smaller unit (e.g. 1536M "
                         "instead of 1.5G)"));
  }
}

TEST(Memory, UnknownUnitsAreRejected) {
  for (const char* m : {"4X", "4P", "4KM", "4Gibibytes", "4iB", "4 G B"}) {
    SCOPED_TRACE(m);
    const auto r = with(std::string("memory: '") + m + "'\n");
    ASSERT_TRUE(ErrorCount(r, 1));
    EXPECT_TRUE(HasError(r, "memory", 3, 9, "has an unknown unit"));
  }
}

TEST(Memory, NotANumber) {
  for (const char* m : {"G", "-1G", "+1G", "lots", "0x10"}) {
    SCOPED_TRACE(m);
    const auto r = with(std::string("memory: '") + m + "'\n");
    ASSERT_TRUE(ErrorCount(r, 1));
    EXPECT_EQ(test::at_path(r, "memory").size(), 1u);
  }
  EXPECT_TRUE(HasError(with("memory: lots\n"), "memory", 3, 9, "\"lots\" is not a size"));
  EXPECT_TRUE(HasError(with("memory: ''\n"), "memory", 3, 9, "a size must not be empty"));
  EXPECT_TRUE(HasError(with("memory: [4G]\n"), "memory", 3, 9, "expected a single value"));
}

TEST(Memory, TooLarge) {
  const auto r = with("memory: 16777216T\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "memory", 3, 9, "\"16777216T\" is too large"));
  EXPECT_TRUE(HasError(with("memory: 99999999999999999999\n"), "memory", 3, 9, "is too large"));
}

// Seed 003's defaults: a VM nothing sizes is a u1.medium with the ubuntu preference.
TEST(Memory, NothingSizedIsAU1MediumWithTheUbuntuPreference) {
  const auto r = with("");
  ASSERT_TRUE(Valid(r));
  EXPECT_FALSE(r.spec->memory_bytes);
  EXPECT_FALSE(r.spec->cpus);
  EXPECT_EQ(r.spec->instance_type, "u1.medium");
  EXPECT_EQ(r.spec->sizing.source, SizingSource::InstanceType);
  EXPECT_EQ(r.spec->sizing.memory_bytes, 4 * kGiB);
  EXPECT_EQ(r.spec->sizing.vcpus(), 1u);
  EXPECT_EQ(r.spec->instance_profile, "ubuntu");
  EXPECT_EQ(r.spec->origins.at("instanceType"), "default");
  EXPECT_EQ(r.spec->origins.at("instanceProfile"), "default");
  EXPECT_EQ(r.spec->origins.at("sizing"), "instance type u1.medium (default)");
  EXPECT_EQ(r.spec->origins.at("firmware.bootloader"), "preference ubuntu");
}

// knot's sizing keeps knot's defaults for what it leaves out, and gets the ubuntu preference
// only when the VM meets ubuntu's minimum (2Gi, 1 vCPU): knot templates keep working.
TEST(Memory, KnotSizingKeepsKnotsDefaultsAndTheUbuntuMinimum) {
  auto r = with("cpus: 2\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->sizing.source, SizingSource::Knot);
  EXPECT_EQ(r.spec->sizing.memory_bytes, 512 * kMiB);
  EXPECT_EQ(r.spec->sizing.vcpus(), 2u);
  EXPECT_FALSE(r.spec->instance_type);
  EXPECT_FALSE(r.spec->instance_profile);
  EXPECT_EQ(r.spec->origins.at("sizing"), "template (cpus; 512 MiB by default)");
  EXPECT_NE(r.spec->origins.at("instanceProfile").find("none: the default ubuntu needs at least"),
            std::string::npos)
      << r.spec->origins.at("instanceProfile");
  r = with("memory: 4G\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->instance_profile, "ubuntu");
  EXPECT_EQ(r.spec->origins.at("sizing"), "template (memory; 1 vCPU by default)");
  // instanceType: "" says "no instance type": knot's defaults, not Cozystack's.
  r = with("instanceType: \"\"\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_FALSE(r.spec->instance_type);
  EXPECT_EQ(r.spec->sizing.source, SizingSource::Default);
  EXPECT_EQ(r.spec->sizing.memory_bytes, 512 * kMiB);
  // A written preference is the template's.
  r = with("instanceProfile: alpine\n");
  EXPECT_EQ(r.spec->origins.at("instanceProfile"), "template");
}

TEST(Disk, SizesInBytes) {
  auto r = with("disk: 20G\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->disk_bytes, 20 * kGiB);
  r = with("disk: 20GiB\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->disk_bytes, 20 * kGiB);
  r = with("disk: 1048576\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->disk_bytes, kMiB);
  r = with("");
  ASSERT_TRUE(Valid(r));
  EXPECT_FALSE(r.spec->disk_bytes);
}

TEST(Disk, Errors) {
  EXPECT_TRUE(HasError(with("disk: 100\n"), "disk", 3, 7,
                       "below 1 MiB: a bare number is bytes; write a unit, e.g. 20G"));
  EXPECT_TRUE(HasError(with("disk: 2.5T\n"), "disk", 3, 7, "has a fraction"));
  EXPECT_TRUE(HasError(with("disk: 20Q\n"), "disk", 3, 7, "has an unknown unit \"Q\""));
}

// cpus

TEST(Cpus, WholeNumbers) {
  for (const char* c : {"1", "2", "'8'", "4294967295"}) {
    SCOPED_TRACE(c);
    const auto r = with(std::string("cpus: ") + c + "\n");
    ASSERT_TRUE(Valid(r));
  }
  const auto r = with("cpus: 4\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->cpus, 4u);
  EXPECT_EQ(r.spec->sizing.vcpus(), 4u);
  EXPECT_EQ(r.spec->sizing.memory_bytes, 512 * kMiB);
  EXPECT_EQ(r.spec->sizing.source, SizingSource::Knot);
}

TEST(Cpus, FractionsAreRejectedNotTruncated) {
  for (const char* c : {"1.5", "2.0", "0.5"}) {
    SCOPED_TRACE(c);
    const auto r = with(std::string("cpus: ") + c + "\n");
    ASSERT_TRUE(ErrorCount(r, 1));
    EXPECT_TRUE(HasError(
        r, "cpus", 3, 7,
        std::string("\"") + c + "\" is a fraction: expected a whole number from 1 to 4294967295"));
  }
}

TEST(Cpus, OtherErrors) {
  EXPECT_TRUE(HasError(with("cpus: 0\n"), "cpus", 3, 7, "0 is not allowed"));
  EXPECT_TRUE(HasError(with("cpus: -1\n"), "cpus", 3, 7, "\"-1\" is negative"));
  EXPECT_TRUE(HasError(with("cpus: +2\n"), "cpus", 3, 7, "\"+2\" has a sign"));
  EXPECT_TRUE(HasError(with("cpus: 4294967296\n"), "cpus", 3, 7, "is above 4294967295"));
  EXPECT_TRUE(HasError(with("cpus: 08\n"), "cpus", 3, 7, "has a leading zero"));
  EXPECT_TRUE(HasError(with("cpus: two\n"), "cpus", 3, 7,
                       "\"two\" is not a whole number from 1 to 4294967295"));
  EXPECT_TRUE(HasError(with("cpus: 1e3\n"), "cpus", 3, 7, "is not a whole number"));
}

// resources

TEST(Resources, CompleteBlockSizesTheVm) {
  const auto r = with("resources: {cpu: 2, sockets: 3, memory: 8Gi}\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->sizing.source, SizingSource::Resources);
  EXPECT_EQ(r.spec->sizing.cores, 2u);
  EXPECT_EQ(r.spec->sizing.sockets, 3u);
  EXPECT_EQ(r.spec->sizing.vcpus(), 6u);
  EXPECT_EQ(r.spec->sizing.memory_bytes, 8 * kGiB);
  EXPECT_EQ(r.spec->resources.memory_text, "8Gi");
}

TEST(Resources, QuotedWholeNumbersAreAccepted) {
  const auto r = with("resources: {cpu: '2', sockets: \"1\", memory: 1G}\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->sizing.memory_bytes, 1000000000u);
}

struct CountCase {
  const char* value;
  const char* message;
};

class ResourceCount : public ::testing::TestWithParam<CountCase> {};

TEST_P(ResourceCount, CpuAndSocketsRejectIt) {
  const auto& c = GetParam();
  // cpu: the value sits at line 4, column 8; sockets: line 5, column 12.
  const auto r = with(std::string("resources:\n  cpu: ") + c.value + "\n  sockets: " + c.value +
                      "\n  memory: 1Gi\n");
  EXPECT_TRUE(HasError(r, "resources.cpu", 4, 8, c.message));
  EXPECT_TRUE(HasError(r, "resources.cpu", 4, 8, "(it becomes the VM's unsigned cores count)"));
  EXPECT_TRUE(HasError(r, "resources.sockets", 5, 12, c.message));
  EXPECT_TRUE(
      HasError(r, "resources.sockets", 5, 12, "(it becomes the VM's unsigned sockets count)"));
  EXPECT_TRUE(ErrorCount(r, 2));
}

INSTANTIATE_TEST_SUITE_P(
    Resources, ResourceCount,
    ::testing::Values(CountCase{"500m", "\"500m\" is in millicores: expected a whole number"},
                      CountCase{"1.5", "\"1.5\" is a fraction"},
                      CountCase{"0", "0 is not allowed: expected a whole number from 1 to"},
                      CountCase{"-1", "\"-1\" is negative"},
                      CountCase{"4294967296", "\"4294967296\" is above 4294967295"},
                      CountCase{"\"08\"", "\"08\" has a leading zero"},
                      CountCase{"08", "\"08\" has a leading zero"},
                      CountCase{"2Gi", "\"2Gi\" is not a whole number from 1 to 4294967295"},
                      CountCase{"1k", "\"1k\" is not a whole number"}));

TEST(Resources, LargestCountIsAccepted) {
  const auto r = with("resources: {cpu: 4294967295, sockets: 1, memory: 1Gi}\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->sizing.cores, 4294967295u);
}

TEST(Resources, CpuTimesSocketsAboveUint32IsRejected) {
  const auto r = with("resources: {cpu: 65536, sockets: 65536, memory: 1Gi}\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "resources", 3, 12, "cpu x sockets = 4294967296 vCPUs"));
}

TEST(Resources, MemoryQuantities) {
  struct {
    const char* text;
    std::uint64_t bytes;
  } cases[] = {{"1M", 1000000},        {"977Ki", 977 * kKiB}, {"8Gi", 8 * kGiB},
               {"1.5Gi", 1536 * kMiB}, {"0.5G", 500000000},   {"2147483648", 2 * kGiB},
               {"1Ti", kTiB}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const auto r = with(std::string("resources: {cpu: 1, sockets: 1, memory: ") + c.text + "}\n");
    ASSERT_TRUE(Valid(r));
    EXPECT_EQ(r.spec->sizing.memory_bytes, c.bytes);
  }
}

TEST(Resources, MemoryBelowOneMegabyteIsRejected) {
  for (const char* m : {"999999", "999k", "976Ki", "0", "0.5M"}) {
    SCOPED_TRACE(m);
    const auto r = with(std::string("resources: {cpu: 1, sockets: 1, memory: ") + m + "}\n");
    ASSERT_TRUE(ErrorCount(r, 1));
    EXPECT_TRUE(HasError(r, "resources.memory", 3, 41,
                         std::string("\"") + m + "\" is below 1M: KubeVirt refuses less"));
  }
}

TEST(Resources, MemoryErrors) {
  auto mem = [](const char* m) {
    return with(std::string("resources: {cpu: 1, sockets: 1, memory: \"") + m + "\"}\n");
  };
  EXPECT_TRUE(HasError(mem("512m"), "resources.memory", 3, 41, "thousandths of a byte"));
  EXPECT_TRUE(HasError(mem("1e9"), "resources.memory", 3, 41, "uses an exponent"));
  EXPECT_TRUE(HasError(mem("1e"), "resources.memory", 3, 41, "uses an exponent"));
  EXPECT_TRUE(HasError(mem("1.5"), "resources.memory", 3, 41, "is not a whole number of bytes"));
  EXPECT_TRUE(HasError(mem("8GB"), "resources.memory", 3, 41, "unknown suffix \"GB\""));
  EXPECT_TRUE(HasError(mem("8gi"), "resources.memory", 3, 41, "unknown suffix \"gi\""));
  EXPECT_TRUE(HasError(mem("-1Gi"), "resources.memory", 3, 41, "has a sign"));
  EXPECT_TRUE(HasError(mem("Gi"), "resources.memory", 3, 41, "is not a quantity"));
  EXPECT_TRUE(HasError(mem("1.2.3Gi"), "resources.memory", 3, 41, "is not a quantity"));
  EXPECT_TRUE(HasError(mem("20000000Ei"), "resources.memory", 3, 41, "is too large"));
}

// As Cozystack says: cpu or sockets on its own sizes nothing and is ignored (with a warning
// that lists what is missing); the VM is sized as without the block.
TEST(Resources, PartialBlockWithoutInstanceTypeIsIgnoredListingWhatIsMissing) {
  const auto r = with("resources: {cpu: 2}\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_TRUE(HasWarning(r, "resources", 3, 12,
                         "ignored: resources size the VM only with cpu, sockets and memory "
                         "together (resources.sockets, resources.memory missing)"));
  EXPECT_FALSE(r.spec->resources.cpu);
  EXPECT_NE(r.spec->sizing.source, SizingSource::Resources);
  EXPECT_EQ(r.spec->instance_type, "u1.medium");
}

TEST(Resources, PartialBlockWithInstanceTypeIsRejectedListingGivenAndMissing) {
  const auto r = with("instanceType: u1.medium\nresources:\n  memory: 8Gi\n  cpu: 2\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "resources", 5, 3,
                       "instanceType \"u1.medium\" cannot be combined with resources that size "
                       "the VM only in part (resources.cpu, resources.memory given; "
                       "resources.sockets missing)"));
}

TEST(Resources, CompleteBlockOverridesInstanceTypeWithAWarning) {
  const auto r = with("instanceType: u1.medium\nresources: {cpu: 4, sockets: 2, memory: 16Gi}\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_TRUE(HasWarning(r, "instanceType", 3, 15,
                         "ignored: resources size the VM, so the whole instance type is dropped"));
  EXPECT_EQ(r.spec->sizing.source, SizingSource::Resources);
  EXPECT_EQ(r.spec->sizing.vcpus(), 8u);
  EXPECT_EQ(r.spec->sizing.memory_bytes, 16 * kGiB);
}

TEST(Resources, KnotSizingTogetherWithResourcesIsAmbiguous) {
  auto r = with("memory: 4G\nresources: {cpu: 1, sockets: 1, memory: 4Gi}\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "memory", 3, 9,
                       "memory/cpus and resources both size the VM: keep one (resources: {cpu, "
                       "sockets, memory})"));
  r = with("cpus: 2\nresources: {memory: 4Gi}\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "cpus", 3, 7, "memory/cpus and resources both size the VM"));
}

TEST(Resources, KnotSizingTogetherWithInstanceTypeIsAmbiguous) {
  auto r = with("instanceType: u1.large\nmemory: 4G\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(
      HasError(r, "memory", 4, 9, "memory/cpus and instanceType both size the VM: keep one"));
  r = with("cpus: 2\ninstanceType: u1.large\n");
  EXPECT_TRUE(HasError(r, "cpus", 3, 7, "memory/cpus and instanceType both size the VM"));
}

TEST(Resources, NotAMapping) {
  const auto r = with("resources: 4\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "resources", 3, 12, "expected a mapping, got a single value"));
}

TEST(Resources, TemplatedValuesWaitForValues) {
  const std::string text =
      "image: debian-12\nnetwork: {mode: nat}\n"
      "resources: {cpu: '${{ .var.cpu }}', sockets: 1, memory: '${{ .var.mem }}'}\n";
  EXPECT_TRUE(Valid(load(text)));
  const auto r = load(
      text,
      Variables{
          {"user.username", "a"}, {"space.name", "b"}, {"var.cpu", "500m"}, {"var.mem", "4Gi"}});
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "resources.cpu", 3, 18, "in millicores"));
}

// instanceType and instanceProfile

TEST(InstanceType, SizesTheVm) {
  const auto r = with("instanceType: u1.large\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->instance_type, "u1.large");
  EXPECT_EQ(r.spec->sizing.source, SizingSource::InstanceType);
  EXPECT_EQ(r.spec->sizing.vcpus(), 2u);
  EXPECT_EQ(r.spec->sizing.memory_bytes, 8 * kGiB);
}

TEST(InstanceType, EmptyMeansNone) {
  const auto r = with("instanceType: ''\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_FALSE(r.spec->instance_type);
  EXPECT_EQ(r.spec->sizing.source, SizingSource::Default);
}

TEST(InstanceType, UnknownIsAnErrorWithASuggestion) {
  auto r = with("instanceType: u1.mediun\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "instanceType", 3, 15,
                       "unknown instance type \"u1.mediun\" (did you mean u1.medium?)"));
  r = with("instanceType: gigantic-box-9000\n");
  EXPECT_TRUE(HasError(r, "instanceType", 3, 15,
                       "unknown instance type \"gigantic-box-9000\" (see bowline catalog "
                       "instancetypes)"));
}

TEST(InstanceProfile, UnknownIsAnErrorWithASuggestion) {
  auto r = with("instanceProfile: ubuntoo\nmemory: 2G\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "instanceProfile", 3, 18,
                       "unknown preference \"ubuntoo\" (did you mean ubuntu?)"));
  r = with("instanceProfile: beos-5-pro\n");
  EXPECT_TRUE(HasError(r, "instanceProfile", 3, 18,
                       "unknown preference \"beos-5-pro\" (see bowline catalog preferences)"));
}

TEST(InstanceProfile, KnownProfileIsKept) {
  const auto r = with("instanceProfile: alpine\n");
  ASSERT_TRUE(Valid(r));
  EXPECT_EQ(r.spec->instance_profile, "alpine");
}

// The one instance-type trait libvirt cannot express is a warning that names the backends.
TEST(InstanceType, MemoryOvercommitIsAWarningForLibvirt) {
  const auto r = with("instanceType: o1.medium\n");
  ASSERT_TRUE(Valid(r));
  ASSERT_EQ(r.diagnostics.items().size(), 1u);
  EXPECT_EQ(r.diagnostics.items()[0].severity, Severity::Warning);
  EXPECT_NE(r.diagnostics.items()[0].message.find("overcommits memory (50%): the KubeVirt backend "
                                                  "applies it; on libvirt"),
            std::string::npos)
      << r.diagnostics.items()[0].message;
  EXPECT_TRUE(with("instanceType: cx1.large\n").diagnostics.items().empty())
      << "dedicated CPUs, vNUMA and hugepages are rendered on libvirt too";
}

TEST(InstanceProfile, UbuntuNeedsTwoGibibytes) {
  auto r = with("instanceProfile: ubuntu\nmemory: 512M\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "instanceProfile", 3, 18,
                       "preference \"ubuntu\" needs at least 2Gi of memory; the VM has 512Mi"));
  r = with("instanceProfile: ubuntu\nmemory: 1536M\n");
  EXPECT_TRUE(
      HasError(r, "instanceProfile", 3, 18, "needs at least 2Gi of memory; the VM has 1536Mi"));
  EXPECT_TRUE(Valid(with("instanceProfile: ubuntu\nmemory: 2G\n")));
  EXPECT_TRUE(Valid(with("instanceProfile: ubuntu\ninstanceType: u1.small\n")));
  EXPECT_TRUE(HasError(with("instanceProfile: ubuntu\ninstanceType: u1.micro\n"), "instanceProfile",
                       3, 18, "the VM has 1Gi"));
  EXPECT_TRUE(
      Valid(with("instanceProfile: ubuntu\nresources: {cpu: 1, sockets: 1, memory: 2Gi}\n")));
  EXPECT_TRUE(
      HasError(with("instanceProfile: ubuntu\nresources: {cpu: 1, sockets: 1, memory: 2G}\n"),
               "instanceProfile", 3, 18, "the VM has 1953125Ki"));
}

TEST(InstanceProfile, MinimumVcpus) {
  const auto r = with("instanceProfile: windows.11\nmemory: 4G\n");
  ASSERT_TRUE(ErrorCount(r, 1));
  EXPECT_TRUE(HasError(r, "instanceProfile", 3, 18,
                       "preference \"windows.11\" needs at least 2 vCPUs; the VM has 1"));
  EXPECT_TRUE(Valid(with("instanceProfile: windows.11\nmemory: 4G\ncpus: 2\n")));
}

TEST(InstanceProfile, MinimumWaitsForTemplatedSizes) {
  EXPECT_TRUE(Valid(with("instanceProfile: ubuntu\nmemory: ${{ .var.memory }}\n")));
  const auto r = load(
      "image: debian-12\nnetwork: {mode: nat}\ninstanceProfile: ubuntu\nmemory: ${{ .var.m }}\n",
      Variables{{"user.username", "a"}, {"space.name", "b"}, {"var.m", "1G"}});
  EXPECT_TRUE(HasError(r, "instanceProfile", 3, 18, "the VM has 1Gi"));
}

}  // namespace
}  // namespace bowline::spec
