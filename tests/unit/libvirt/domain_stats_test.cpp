// Domain statistics: libvirt's record fields read into our types (parse_domain_stats), and
// all_domain_stats() against the test driver, which supports virConnectGetAllDomainStats only
// in part: each running domain with its state, and nothing else (no CPU time, balloon, disks
// or NICs). The figures themselves are tested on fields here and through the sampler.
#include <gtest/gtest.h>

#include <algorithm>

#include "hypervisor_test_support.hpp"
#include "libvirt/libvirt_hypervisor.hpp"

namespace bowline::libvirt {
namespace {

using namespace hvtest;

StatField number(std::string key, std::uint64_t value) {
  return {std::move(key), value, {}};
}
StatField text(std::string key, std::string value) {
  return {std::move(key), 0, std::move(value)};
}

TEST(stats_libvirt, ParsesTheGroupsOfARecord) {
  const auto stats = parse_domain_stats("alice-dev", {number("state.state", 1),
                                                      number("state.reason", 1),
                                                      number("cpu.time", 12'000'000'000),
                                                      number("cpu.user", 1),
                                                      number("vcpu.current", 2),
                                                      number("vcpu.maximum", 4),
                                                      number("balloon.current", 1'048'576),
                                                      number("balloon.maximum", 2'097'152),
                                                      number("balloon.available", 1'000'000),
                                                      number("balloon.unused", 600'000),
                                                      number("balloon.disk_caches", 100'000),
                                                      number("balloon.rss", 300'000),
                                                      number("block.count", 2),
                                                      text("block.0.name", "vda"),
                                                      number("block.0.rd.reqs", 10),
                                                      number("block.0.rd.bytes", 4096),
                                                      number("block.0.wr.reqs", 3),
                                                      number("block.0.wr.bytes", 1536),
                                                      text("block.1.name", "sda"),
                                                      number("block.1.rd.bytes", 512),
                                                      number("net.count", 1),
                                                      text("net.0.name", "vnet7"),
                                                      number("net.0.rx.bytes", 999),
                                                      number("net.0.tx.bytes", 111),
                                                      number("net.0.rx.pkts", 5)});
  EXPECT_EQ(stats.name, "alice-dev");
  EXPECT_EQ(stats.status.state, DomainState::Running);
  EXPECT_EQ(stats.status.reason, 1);
  EXPECT_EQ(stats.cpu_time_ns, 12'000'000'000u);
  EXPECT_EQ(stats.vcpus, 2u);
  EXPECT_EQ(stats.balloon_current_kib, 1'048'576u);
  EXPECT_EQ(stats.balloon_maximum_kib, 2'097'152u);
  EXPECT_EQ(stats.balloon_available_kib, 1'000'000u);
  EXPECT_EQ(stats.balloon_unused_kib, 600'000u);
  EXPECT_EQ(stats.balloon_disk_caches_kib, 100'000u);
  EXPECT_EQ(stats.balloon_rss_kib, 300'000u);
  ASSERT_EQ(stats.disks.size(), 2u);
  EXPECT_EQ(stats.disks[0].name, "vda");
  EXPECT_EQ(stats.disks[0].read_requests, 10u);
  EXPECT_EQ(stats.disks[0].read_bytes, 4096u);
  EXPECT_EQ(stats.disks[0].write_requests, 3u);
  EXPECT_EQ(stats.disks[0].write_bytes, 1536u);
  EXPECT_EQ(stats.disks[1].name, "sda");
  EXPECT_EQ(stats.disks[1].read_bytes, 512u);
  ASSERT_EQ(stats.nics.size(), 1u);
  EXPECT_EQ(stats.nics[0].name, "vnet7");
  EXPECT_EQ(stats.nics[0].rx_bytes, 999u);
  EXPECT_EQ(stats.nics[0].tx_bytes, 111u);
}

TEST(stats_libvirt, WhatIsNotReportedStaysUnknown) {
  // A guest without its balloon driver: the balloon's size and QEMU's RSS, no guest figures.
  const auto stats = parse_domain_stats(
      "d", {number("state.state", 1), number("balloon.current", 65536), number("balloon.rss", 1)});
  EXPECT_FALSE(stats.cpu_time_ns);
  EXPECT_FALSE(stats.vcpus);
  EXPECT_EQ(stats.balloon_current_kib, 65536u);
  EXPECT_FALSE(stats.balloon_available_kib);
  EXPECT_FALSE(stats.balloon_unused_kib);
  EXPECT_TRUE(stats.disks.empty());
  EXPECT_TRUE(stats.nics.empty());
}

TEST(stats_libvirt, StrangeKeysAreIgnored) {
  const auto stats =
      parse_domain_stats("d", {number("block.x.rd.bytes", 1), number("block.99999999.rd.bytes", 1),
                               number("block.", 1), number("block.0", 1), number("blockx.0.a", 1),
                               number("net.-1.rx.bytes", 1), text("net.0.name", "vnet0")});
  EXPECT_TRUE(stats.disks.empty());
  ASSERT_EQ(stats.nics.size(), 1u);
  EXPECT_EQ(stats.nics[0].name, "vnet0");
}

TEST(stats_libvirt, TheTestDriverReportsRunningDomainsWithTheirStateOnly) {
  LibvirtHypervisor hv{LibvirtOptions{.uri = node_uri()}};
  hv.define(test_domain_xml("running", kUuid));
  hv.define(test_domain_xml("off", "0e6a55b1-2f3b-4c5d-9e8f-a1b2c3d4e5f6"));
  hv.start("running");
  const auto all = hv.all_domain_stats();
  const auto find = [&](const std::string& name) {
    return std::find_if(all.begin(), all.end(), [&](const auto& s) { return s.name == name; });
  };
  ASSERT_NE(find("running"), all.end());
  EXPECT_EQ(find("off"), all.end()) << "only running domains are asked";
  const auto& running = *find("running");
  EXPECT_EQ(running.status.state, DomainState::Running);
  // What the test driver of libvirt 9 leaves out (the sampler shows these as unknown).
  EXPECT_FALSE(running.cpu_time_ns);
  EXPECT_FALSE(running.balloon_current_kib);
  EXPECT_TRUE(running.disks.empty());
}

}  // namespace
}  // namespace bowline::libvirt
