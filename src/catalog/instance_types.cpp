// The instance-type catalog: every VirtualMachineClusterInstancetype Cozystack installs, in the
// order of its published table (series alphabetical, sizes alphabetical within a series).
#include <cstdint>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"

namespace bowline::catalog {

namespace {

constexpr std::uint64_t kMi = std::uint64_t{1024} * 1024;
constexpr std::uint64_t kGi = kMi * 1024;

constexpr SeriesTraits kCx1{
    .series = "cx1",
    .class_name = "compute.exclusive",
    .description =
        "Pinned vCPUs, isolated emulator core, host NUMA layout and hugepages; 2 GiB per vCPU.",
    .dedicated_cpu = true,
    .isolate_emulator_thread = true,
    .vnuma = true,
};
constexpr SeriesTraits kD1{
    .series = "d1",
    .class_name = "dedicated.vcpu",
    .description =
        "Pinned vCPUs and a separate emulator core on ordinary memory pages, sized like u1.",
    .dedicated_cpu = true,
    .isolate_emulator_thread = true,
};
constexpr SeriesTraits kGn1{
    .series = "gn1",
    .class_name = "gpu.nvidia",
    .description =
        "Shared vCPUs plus one passed-through NVIDIA GPU; retained only so existing VMs resolve.",
    .deprecated = true,
};
constexpr SeriesTraits kM1{
    .series = "m1",
    .class_name = "memory.intensive",
    .description =
        "Shared vCPUs with hugepage-backed memory at 8 GiB per vCPU, for memory-hungry services.",
};
constexpr SeriesTraits kN1{
    .series = "n1",
    .class_name = "network",
    .description =
        "Pinned vCPUs on 1 GiB hugepages with host IRQ and CPU balancing switched off, for DPDK.",
    .dedicated_cpu = true,
    .isolate_emulator_thread = true,
};
constexpr SeriesTraits kO1{
    .series = "o1",
    .class_name = "overcommitted",
    .description =
        "The u1 shape with guest memory overcommitted by half, to fit more VMs per node.",
    .memory_overcommit_percent = 50,
};
constexpr SeriesTraits kRt1{
    .series = "rt1",
    .class_name = "realtime",
    .description =
        "Like n1, plus a host-mirroring guest NUMA topology and realtime vCPUs, for latency work.",
    .dedicated_cpu = true,
    .isolate_emulator_thread = true,
    .vnuma = true,
    .realtime = true,
};
constexpr SeriesTraits kU1{
    .series = "u1",
    .class_name = "general.purpose",
    .description = "Shared, burstable vCPUs with 4 GiB per vCPU; the everyday default.",
};

InstanceType make(std::string_view name, std::uint32_t vcpus, std::uint64_t memory_bytes,
                  std::string_view memory_text, std::string_view hugepages,
                  const SeriesTraits& traits) {
  InstanceType t;
  t.name = name;
  t.vcpus = vcpus;
  t.memory_bytes = memory_bytes;
  t.memory_text = memory_text;
  t.hugepages_size = hugepages;
  t.traits = &traits;
  return t;
}

InstanceType gpu(std::string_view name, std::uint32_t vcpus, std::uint64_t memory_bytes,
                 std::string_view memory_text) {
  InstanceType t = make(name, vcpus, memory_bytes, memory_text, "", kGn1);
  t.gpus = {"nvidia.com/A400"};
  return t;
}

const std::vector<InstanceType>& table() {
  static const std::vector<InstanceType> types = {
      make("cx1.2xlarge", 8, 16 * kGi, "16Gi", "2Mi", kCx1),
      make("cx1.2xlarge1gi", 8, 16 * kGi, "16Gi", "1Gi", kCx1),
      make("cx1.4xlarge", 16, 32 * kGi, "32Gi", "2Mi", kCx1),
      make("cx1.4xlarge1gi", 16, 32 * kGi, "32Gi", "1Gi", kCx1),
      make("cx1.8xlarge", 32, 64 * kGi, "64Gi", "2Mi", kCx1),
      make("cx1.8xlarge1gi", 32, 64 * kGi, "64Gi", "1Gi", kCx1),
      make("cx1.large", 2, 4 * kGi, "4Gi", "2Mi", kCx1),
      make("cx1.large1gi", 2, 4 * kGi, "4Gi", "1Gi", kCx1),
      make("cx1.medium", 1, 2 * kGi, "2Gi", "2Mi", kCx1),
      make("cx1.medium1gi", 1, 2 * kGi, "2Gi", "1Gi", kCx1),
      make("cx1.xlarge", 4, 8 * kGi, "8Gi", "2Mi", kCx1),
      make("cx1.xlarge1gi", 4, 8 * kGi, "8Gi", "1Gi", kCx1),

      make("d1.2xlarge", 8, 32 * kGi, "32Gi", "", kD1),
      make("d1.2xmedium", 2, 4 * kGi, "4Gi", "", kD1),
      make("d1.4xlarge", 16, 64 * kGi, "64Gi", "", kD1),
      make("d1.8xlarge", 32, 128 * kGi, "128Gi", "", kD1),
      make("d1.large", 2, 8 * kGi, "8Gi", "", kD1),
      make("d1.medium", 1, 4 * kGi, "4Gi", "", kD1),
      make("d1.micro", 1, 1 * kGi, "1Gi", "", kD1),
      make("d1.nano", 1, 512 * kMi, "512Mi", "", kD1),
      make("d1.small", 1, 2 * kGi, "2Gi", "", kD1),
      make("d1.xlarge", 4, 16 * kGi, "16Gi", "", kD1),

      gpu("gn1.2xlarge", 8, 32 * kGi, "32Gi"),
      gpu("gn1.4xlarge", 16, 64 * kGi, "64Gi"),
      gpu("gn1.8xlarge", 32, 128 * kGi, "128Gi"),
      gpu("gn1.xlarge", 4, 16 * kGi, "16Gi"),

      make("m1.2xlarge", 8, 64 * kGi, "64Gi", "2Mi", kM1),
      make("m1.2xlarge1gi", 8, 64 * kGi, "64Gi", "1Gi", kM1),
      make("m1.4xlarge", 16, 128 * kGi, "128Gi", "2Mi", kM1),
      make("m1.4xlarge1gi", 16, 128 * kGi, "128Gi", "1Gi", kM1),
      make("m1.8xlarge", 32, 256 * kGi, "256Gi", "2Mi", kM1),
      make("m1.8xlarge1gi", 32, 256 * kGi, "256Gi", "1Gi", kM1),
      make("m1.large", 2, 16 * kGi, "16Gi", "2Mi", kM1),
      make("m1.large1gi", 2, 16 * kGi, "16Gi", "1Gi", kM1),
      make("m1.xlarge", 4, 32 * kGi, "32Gi", "2Mi", kM1),
      make("m1.xlarge1gi", 4, 32 * kGi, "32Gi", "1Gi", kM1),

      make("n1.2xlarge", 16, 32 * kGi, "32Gi", "1Gi", kN1),
      make("n1.4xlarge", 32, 64 * kGi, "64Gi", "1Gi", kN1),
      make("n1.8xlarge", 64, 128 * kGi, "128Gi", "1Gi", kN1),
      make("n1.large", 4, 8 * kGi, "8Gi", "1Gi", kN1),
      make("n1.medium", 4, 4 * kGi, "4Gi", "1Gi", kN1),
      make("n1.xlarge", 8, 16 * kGi, "16Gi", "1Gi", kN1),

      make("o1.2xlarge", 8, 32 * kGi, "32Gi", "", kO1),
      make("o1.4xlarge", 16, 64 * kGi, "64Gi", "", kO1),
      make("o1.8xlarge", 32, 128 * kGi, "128Gi", "", kO1),
      make("o1.large", 2, 8 * kGi, "8Gi", "", kO1),
      make("o1.medium", 1, 4 * kGi, "4Gi", "", kO1),
      make("o1.micro", 1, 1 * kGi, "1Gi", "", kO1),
      make("o1.nano", 1, 512 * kMi, "512Mi", "", kO1),
      make("o1.small", 1, 2 * kGi, "2Gi", "", kO1),
      make("o1.xlarge", 4, 16 * kGi, "16Gi", "", kO1),

      make("rt1.2xlarge", 8, 32 * kGi, "32Gi", "1Gi", kRt1),
      make("rt1.4xlarge", 16, 64 * kGi, "64Gi", "1Gi", kRt1),
      make("rt1.8xlarge", 32, 128 * kGi, "128Gi", "1Gi", kRt1),
      make("rt1.large", 2, 8 * kGi, "8Gi", "1Gi", kRt1),
      make("rt1.medium", 1, 4 * kGi, "4Gi", "1Gi", kRt1),
      make("rt1.micro", 1, 1 * kGi, "1Gi", "1Gi", kRt1),
      make("rt1.small", 1, 2 * kGi, "2Gi", "1Gi", kRt1),
      make("rt1.xlarge", 4, 16 * kGi, "16Gi", "1Gi", kRt1),

      make("u1.2xlarge", 8, 32 * kGi, "32Gi", "", kU1),
      make("u1.2xmedium", 2, 4 * kGi, "4Gi", "", kU1),
      make("u1.4xlarge", 16, 64 * kGi, "64Gi", "", kU1),
      make("u1.8xlarge", 32, 128 * kGi, "128Gi", "", kU1),
      make("u1.large", 2, 8 * kGi, "8Gi", "", kU1),
      make("u1.medium", 1, 4 * kGi, "4Gi", "", kU1),
      make("u1.micro", 1, 1 * kGi, "1Gi", "", kU1),
      make("u1.nano", 1, 512 * kMi, "512Mi", "", kU1),
      make("u1.small", 1, 2 * kGi, "2Gi", "", kU1),
      make("u1.xlarge", 4, 16 * kGi, "16Gi", "", kU1),
  };
  return types;
}

}  // namespace

std::span<const InstanceType> instance_types() {
  return table();
}

}  // namespace bowline::catalog
