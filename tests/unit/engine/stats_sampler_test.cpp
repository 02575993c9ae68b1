// The stats sampler: rates from two samples, the ring per space, and rounds through a real
// LibvirtNode whose hypervisor (the test driver, which reports no counters) has its statistics
// scripted, with time moved by a ManualTimer.
#include "engine/stats_sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <mutex>
#include <thread>

#include "../common/scratch_files.hpp"
#include "engine/libvirt_node.hpp"
#include "forwarding_hypervisor.hpp"
#include "libvirt/libvirt_hypervisor.hpp"
#include "util/clock.hpp"
#include "util/process.hpp"
#include "util/timer.hpp"

namespace bowline::engine {
namespace {

using namespace std::chrono_literals;

MachineSample counters(std::uint64_t cpu_ns, std::uint64_t disk, std::uint64_t net,
                       unsigned vcpus = 1) {
  MachineSample s;
  s.machine = "m";
  s.vcpus = vcpus;
  s.cpu_ns = cpu_ns;
  s.disk_read_bytes = disk;
  s.disk_write_bytes = disk * 2;
  s.disk_reads = disk / 512;
  s.disk_writes = disk / 1024;
  s.net_rx_bytes = net;
  s.net_tx_bytes = net / 2;
  return s;
}

TEST(stats_sampler, RatesFromTwoSamples) {
  const auto point = rates_between(counters(1'000'000'000, 10'240, 1'000, 2),
                                   counters(3'000'000'000, 30'720, 5'000, 2), 2s, 42);
  EXPECT_EQ(point.time_ms, 42);
  EXPECT_FLOAT_EQ(point.cpu_percent, 50);  // 2 s of CPU in 2 s on 2 vCPUs
  EXPECT_FLOAT_EQ(point.disk_read_bps, 10'240);
  EXPECT_FLOAT_EQ(point.disk_write_bps, 20'480);
  EXPECT_FLOAT_EQ(point.disk_reads_ps, 20);
  EXPECT_FLOAT_EQ(point.disk_writes_ps, 10);
  EXPECT_FLOAT_EQ(point.net_rx_bps, 2'000);
  EXPECT_FLOAT_EQ(point.net_tx_bps, 1'000);
  // Without a vCPU count, of one vCPU.
  EXPECT_FLOAT_EQ(
      rates_between(counters(0, 0, 0, 0), counters(500'000'000, 0, 0, 0), 1s, 0).cpu_percent, 50);
}

TEST(stats_sampler, AMachineThatRestartedHasNoRates) {
  auto after = counters(1'000'000, 10'000'000, 10'000'000);
  after.memory_bytes = 256u << 20;
  const auto point = rates_between(counters(9'000'000'000, 0, 0), after, 10s, 1);
  EXPECT_TRUE(std::isnan(point.cpu_percent));
  EXPECT_TRUE(std::isnan(point.disk_read_bps)) << "its counters started again from 0";
  EXPECT_TRUE(std::isnan(point.net_rx_bps));
  EXPECT_FLOAT_EQ(point.memory_available, 256u << 20) << "memory is still known";
  // One counter that went back gives no rate for that counter alone.
  auto back = counters(2'000'000'000, 100, 100);
  back.net_rx_bytes = 10;
  const auto partly = rates_between(counters(1'000'000'000, 0, 50), back, 1s, 1);
  EXPECT_TRUE(std::isnan(partly.net_rx_bps));
  EXPECT_FLOAT_EQ(partly.disk_read_bps, 100);
  // No time between the two: no rates at all.
  EXPECT_TRUE(std::isnan(rates_between(counters(0, 0, 0), counters(1, 1, 1), 0s, 1).cpu_percent));
}

TEST(stats_sampler, MemoryFromTheBalloon) {
  MachineSample s;
  s.memory_bytes = 1024u << 20;
  s.memory_available = 1000u << 20;
  s.memory_unused = 600u << 20;
  s.memory_caches = 100u << 20;
  s.memory_rss = 300u << 20;
  auto point = memory_point(s, 7);
  EXPECT_FLOAT_EQ(point.memory_used, 300u << 20) << "available - free - page cache";
  EXPECT_FLOAT_EQ(point.memory_available, 1000u << 20);
  EXPECT_FLOAT_EQ(point.memory_rss, 300u << 20);
  EXPECT_TRUE(std::isnan(point.cpu_percent));
  // No balloon driver in the guest: what it was given, and no use.
  s.memory_available.reset();
  s.memory_unused.reset();
  point = memory_point(s, 7);
  EXPECT_FLOAT_EQ(point.memory_available, 1024u << 20);
  EXPECT_TRUE(std::isnan(point.memory_used));
}

TEST(stats_sampler, TheRingKeepsTheLastPointsInOrder) {
  PointRing ring(3);
  EXPECT_TRUE(ring.empty());
  for (int i = 1; i <= 5; ++i) {
    StatsPoint p;
    p.time_ms = i * 1000;
    ring.push(p);
    EXPECT_EQ(ring.newest().time_ms, i * 1000);
  }
  EXPECT_EQ(ring.size(), 3u);
  std::vector<std::int64_t> times;
  for (const auto& p : ring.since(0)) times.push_back(p.time_ms);
  EXPECT_EQ(times, (std::vector<std::int64_t>{3000, 4000, 5000}));
  EXPECT_EQ(ring.since(4000).size(), 1u);
  EXPECT_TRUE(ring.since(5000).empty());
  EXPECT_EQ(sizeof(StatsPoint), 48u);
  EXPECT_EQ(PointRing::bytes_for(360), 360u * 48);
}

// The test driver's hypervisor with the statistics a test sets (it reports none itself).
class ScriptedStats final : public ForwardingHypervisor {
 public:
  using ForwardingHypervisor::ForwardingHypervisor;
  std::vector<libvirt::DomainStats> all_domain_stats() override {
    std::lock_guard lock(mutex);
    ++calls;
    if (answering) answering();
    if (fail) throw libvirt::HypervisorError("libvirt: cannot read domain statistics: broken");
    return stats;
  }
  void set(const std::string& domain, std::uint64_t cpu_ns, std::uint64_t disk_bytes) {
    std::lock_guard lock(mutex);
    auto it = std::find_if(stats.begin(), stats.end(), [&](auto& s) { return s.name == domain; });
    if (it == stats.end()) it = stats.insert(stats.end(), libvirt::DomainStats{});
    it->name = domain;
    it->status.state = libvirt::DomainState::Running;
    it->cpu_time_ns = cpu_ns;
    it->vcpus = 1;
    it->balloon_current_kib = 262'144;
    it->disks = {{"vda", disk_bytes, 0, disk_bytes / 4096, 0}, {"sda", disk_bytes, 0, 0, 0}};
    it->nics = {{"vnet0", 100, 50}};
  }
  void remove(const std::string& domain) {
    std::lock_guard lock(mutex);
    std::erase_if(stats, [&](auto& s) { return s.name == domain; });
  }
  std::mutex mutex;
  std::vector<libvirt::DomainStats> stats;
  bool fail = false;
  int calls = 0;
  std::function<void()> answering;  // runs while the call is "in libvirt" (a slow node)
};

class FakeHost final : public HostProbe {
 public:
  bool bridge_exists(const std::string&) const override { return true; }
  std::vector<std::string> bridge_ports(const std::string&) const override { return {}; }
};

class StatsSamplerRounds : public ::testing::Test {
 protected:
  StatsSamplerRounds() {
    LibvirtNodeSettings settings;
    settings.name = "local";
    settings.node.images_path = (dir_.path() / "images").string();
    node_ = std::make_unique<LibvirtNode>(scripted_, cache_, disks_, host_, settings);
    nodes_.push_back(node_.get());
    alice_ = store_.users().create({"alice", "", "", {}, "", {}, {}}).id;
    template_ = store_.templates().create("t", "image: tiny\n").id;
  }

  std::string add_space(const std::string& name, const std::string& node = "") {
    store::NewSpace s;
    s.node = node;
    s.id = "id-" + name;
    s.name = name;
    s.owner_id = alice_;
    s.template_id = template_;
    s.domain_name = "alice-" + name;
    s.uuid = "uuid-" + name;
    return store_.spaces().create(s).id;
  }

  std::unique_ptr<StatsSampler> sampler(StatsSettings settings = {}) {
    return std::make_unique<StatsSampler>(store_, nodes_, settings, timer_);
  }

  test_support::TempDir dir_;
  util::ManualClock clock_;
  util::ManualTimer timer_;
  store::Store store_{dir_.path() / "bowline.db", clock_};
  libvirt::LibvirtHypervisor test_driver_{libvirt::LibvirtOptions{"test:///default"}};
  ScriptedStats scripted_{test_driver_};
  image::ImageCache cache_{image::CacheOptions{dir_.path() / "cloud", dir_.path() / "base", {}, {}}};
  util::SystemProcessRunner runner_;
  image::Disks disks_{runner_};
  FakeHost host_;
  std::unique_ptr<LibvirtNode> node_;
  std::vector<Node*> nodes_;
  std::int64_t alice_ = 0, template_ = 0;
};

TEST_F(StatsSamplerRounds, stats_ARoundMapsDomainsToSpacesAndMakesRates) {
  const auto dev = add_space("dev");
  const auto web = add_space("web");
  auto s = sampler();
  scripted_.set("alice-dev", 1'000'000'000, 0);
  scripted_.set("alice-web", 0, 0);
  scripted_.set("someone-elses", 0, 0);  // not a space of this server
  s->sample();
  ASSERT_TRUE(s->space(dev));
  EXPECT_TRUE(std::isnan(s->space(dev)->latest->cpu_percent)) << "the first sample: no rate";
  EXPECT_FLOAT_EQ(s->space(dev)->latest->memory_available, 256u << 20);

  timer_.advance(10s);
  clock_.advance(10'000);
  scripted_.set("alice-dev", 6'000'000'000, 40'960);  // 5 s of CPU in 10 s
  scripted_.set("alice-web", 10'000'000'000, 0);      // busy all the time
  s->sample();
  const auto seen = *s->space(dev);
  EXPECT_EQ(seen.space_name, "dev");
  EXPECT_EQ(seen.owner, "alice");
  EXPECT_EQ(seen.owner_id, alice_);
  EXPECT_EQ(seen.node, "local");
  EXPECT_TRUE(seen.running);
  ASSERT_EQ(seen.history.size(), 2u);
  EXPECT_EQ(seen.history[1].time_ms - seen.history[0].time_ms, 10'000);
  EXPECT_FLOAT_EQ(seen.latest->cpu_percent, 50);
  EXPECT_FLOAT_EQ(seen.latest->disk_read_bps, 8'192) << "both disks, over 10 s";
  EXPECT_FLOAT_EQ(seen.latest->disk_reads_ps, 1);
  EXPECT_FLOAT_EQ(seen.latest->net_rx_bps, 0);
  EXPECT_EQ(seen.totals.disk_read_bytes, 81'920u);
  EXPECT_EQ(seen.totals.net_rx_bytes, 100u);
  EXPECT_FLOAT_EQ(s->space(web)->latest->cpu_percent, 100);
  EXPECT_EQ(s->running().size(), 2u);
  EXPECT_EQ(s->space(dev, seen.history[0].time_ms)->history.size(), 1u) << "since";
  EXPECT_EQ(scripted_.calls, 2) << "one call per round for all domains";
}

TEST_F(StatsSamplerRounds, stats_StoppedSpacesKeepTheirHistoryUntilItAgesOut) {
  const auto dev = add_space("dev");
  auto s = sampler({10s, 60s});
  scripted_.set("alice-dev", 0, 0);
  s->sample();
  timer_.advance(10s);
  scripted_.remove("alice-dev");  // stopped
  s->sample();
  ASSERT_TRUE(s->space(dev));
  EXPECT_FALSE(s->space(dev)->running);
  EXPECT_EQ(s->space(dev)->history.size(), 1u);
  EXPECT_TRUE(s->running().empty());
  // Started again: a new run, no rate across the gap.
  timer_.advance(10s);
  scripted_.set("alice-dev", 90'000'000'000, 0);
  s->sample();
  EXPECT_TRUE(std::isnan(s->space(dev)->latest->cpu_percent));
  scripted_.remove("alice-dev");
  timer_.advance(61s);
  s->sample();
  EXPECT_FALSE(s->space(dev)) << "stopped for longer than the history";
}

TEST_F(StatsSamplerRounds, stats_ADeletedSpaceGoesAtTheNextRound) {
  const auto dev = add_space("dev");
  auto s = sampler();
  scripted_.set("alice-dev", 0, 0);
  s->sample();
  ASSERT_TRUE(s->space(dev));
  store_.spaces().remove(dev);
  s->sample();
  EXPECT_FALSE(s->space(dev));
  EXPECT_EQ(s->cost().spaces, 0u);
}

TEST_F(StatsSamplerRounds, stats_MemoryIsBoundedByTheHistory) {
  auto s = sampler({10s, 60s});
  EXPECT_EQ(s->capacity(), 6u);
  std::vector<std::string> ids;
  for (const auto* name : {"a", "b", "c"}) ids.push_back(add_space(name));
  for (int round = 0; round < 20; ++round) {
    for (const auto* name : {"a", "b", "c"})
      scripted_.set(std::string("alice-") + name, round * 1'000'000'000ull, 0);
    s->sample();
    timer_.advance(10s);
    clock_.advance(10'000);
  }
  for (const auto& id : ids) EXPECT_EQ(s->space(id)->history.size(), 6u);
  const auto cost = s->cost();
  EXPECT_EQ(cost.rounds, 20u);
  EXPECT_EQ(cost.spaces, 3u);
  EXPECT_EQ(cost.bytes, 3u * 6 * sizeof(StatsPoint));
  EXPECT_GT(cost.cpu_seconds, 0);
}

TEST_F(StatsSamplerRounds, stats_ANodeThatCannotBeAskedIsNamed) {
  const auto dev = add_space("dev");
  auto s = sampler();
  scripted_.set("alice-dev", 0, 0);
  s->sample();
  EXPECT_FALSE(s->node_problem("local"));
  scripted_.fail = true;
  s->sample();
  ASSERT_TRUE(s->node_problem("local"));
  EXPECT_NE(s->node_problem("local")->find("cannot read domain statistics"), std::string::npos);
  EXPECT_TRUE(s->space(dev)->running) << "a node that did not answer says nothing of its spaces";
  scripted_.fail = false;
  s->sample();
  EXPECT_FALSE(s->node_problem("local"));
}

TEST_F(StatsSamplerRounds, stats_TheThreadSamplesAtOnceAndThenEveryInterval) {
  add_space("dev");
  scripted_.set("alice-dev", 0, 0);
  auto s = sampler({10s, 3600s});
  const auto rounds_reach = [&](std::uint64_t n) {
    for (int i = 0; i < 500 && s->cost().rounds < n; ++i) std::this_thread::sleep_for(10ms);
    return s->cost().rounds >= n;
  };
  s->start();
  EXPECT_TRUE(rounds_reach(1)) << "the baseline at start";
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(s->cost().rounds, 1u) << "no round before the interval";
  timer_.advance(10s);
  EXPECT_TRUE(rounds_reach(2));
  s->stop();
}

TEST_F(StatsSamplerRounds, stats_EachNodesRatesUseTheTimeItsAnswerCame) {
  // A second node that takes 5 s to answer: the first node's counters were read before it, so
  // their rate is over the 10 s between the first node's own answers, not 15 s.
  ScriptedStats slow_stats{test_driver_};
  LibvirtNodeSettings settings;
  settings.name = "remote";
  settings.node.images_path = (dir_.path() / "remote").string();
  LibvirtNode remote(slow_stats, cache_, disks_, host_, settings);
  nodes_.push_back(&remote);
  const auto dev = add_space("dev");
  const auto far = add_space("far", "remote");
  scripted_.set("alice-dev", 0, 0);
  slow_stats.set("alice-far", 0, 0);
  auto s = sampler();
  s->sample();
  timer_.advance(10s);
  clock_.advance(10'000);
  scripted_.set("alice-dev", 5'000'000'000, 0);
  slow_stats.set("alice-far", 15'000'000'000, 0);
  slow_stats.answering = [&] {
    timer_.advance(5s);
    clock_.advance(5'000);
  };
  s->sample();
  EXPECT_FLOAT_EQ(s->space(dev)->latest->cpu_percent, 50);
  EXPECT_FLOAT_EQ(s->space(far)->latest->cpu_percent, 100) << "15 s of CPU in its own 15 s";
  EXPECT_EQ(s->space(dev)->history.back().time_ms + 5'000, s->space(far)->history.back().time_ms);
  EXPECT_EQ(s->space(far)->node, "remote");
}

TEST_F(StatsSamplerRounds, stats_OffMeansNoRounds) {
  auto s = sampler({0s, 3600s});
  EXPECT_FALSE(s->enabled());
  EXPECT_EQ(s->capacity(), 0u);
  s->start();
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(s->cost().rounds, 0u);
  EXPECT_EQ(scripted_.calls, 0);
}

}  // namespace
}  // namespace bowline::engine
