// A guest whose agent stalls (answers guest-sync and nothing else, or nothing at all) cannot
// stall a snapshot beyond the hypervisor's bound on agent calls, nor leave itself frozen: a
// freeze that fails is thawed at once and the snapshot is taken best effort, saying why; a thaw
// that fails after a good snapshot keeps the snapshot and says so. The agent's answers are what
// a test says; the snapshots are libvirt's test driver's. (The bound itself, with a real QEMU
// and an agent that answers only guest-sync: e2e.security_agent_stall.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "../common/scratch_files.hpp"
#include "engine/libvirt_node.hpp"
#include "forwarding_hypervisor.hpp"
#include "libvirt/libvirt_hypervisor.hpp"
#include "util/process.hpp"

namespace bowline::engine {
namespace {

using ::testing::HasSubstr;

constexpr int kAgentUnresponsive = 86;  // VIR_ERR_AGENT_UNRESPONSIVE

libvirt::HypervisorError agent_gone(const std::string& what) {
  const std::string cause = "Guest agent is not responding: Guest agent not available for now";
  return libvirt::HypervisorError("domain: cannot " + what + ": " + cause, kAgentUnresponsive, 0,
                                  cause);
}

// The test driver's snapshots, with freezes and thaws as the test says.
class Agent final : public ForwardingHypervisor {
 public:
  explicit Agent(libvirt::Hypervisor& inner) : ForwardingHypervisor(inner), inner_(inner) {}
  libvirt::SnapshotInfo create_snapshot(const std::string& domain, const std::string& name,
                                        const std::string& description) override {
    if (fail_snapshot) throw std::runtime_error("no room for the snapshot");
    return inner_.create_snapshot(domain, name, description);
  }
  std::vector<libvirt::SnapshotInfo> snapshots(const std::string& domain) override {
    return inner_.snapshots(domain);
  }
  bool delete_snapshot(const std::string& domain, const std::string& name) override {
    return inner_.delete_snapshot(domain, name);
  }
  unsigned freeze_filesystems(const std::string&) override {
    calls.push_back("freeze");
    if (++frozen > 1) overlapped = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (freeze_stalls) {
      --frozen;
      throw agent_gone("freeze the guest's filesystems");
    }
    return 2;
  }
  void thaw_filesystems(const std::string&) override {
    calls.push_back("thaw");
    if (thaw_stalls) throw agent_gone("thaw the guest's filesystems");
    if (frozen > 0) --frozen;
  }
  bool freeze_stalls = false, thaw_stalls = false, fail_snapshot = false;
  std::vector<std::string> calls;
  std::atomic<int> frozen{0};
  std::atomic<bool> overlapped{false};

 private:
  libvirt::Hypervisor& inner_;
};

class NoBridges final : public HostProbe {
 public:
  bool bridge_exists(const std::string&) const override { return false; }
  std::vector<std::string> bridge_ports(const std::string&) const override { return {}; }
};

class security_agent_stall : public ::testing::Test {
 protected:
  security_agent_stall() {
    image::CacheOptions cache;
    cache.cloud_image_path = dir_.path() / "cloud-images";
    cache.base_image_path = dir_.path() / "base";
    cache_ = std::make_unique<image::ImageCache>(cache);
    LibvirtNodeSettings settings;
    settings.node.images_path = dir_.path().string();
    node_ = std::make_unique<LibvirtNode>(agent_, *cache_, disks_, bridges_, settings);
    space_.id = "agent-stall-" + std::to_string(::getpid());
    space_.name = "stall";
    space_.domain_name = "bwstall-" + std::to_string(::getpid());
    inner_.define("<domain type='test'><name>" + space_.domain_name +
                  "</name><memory unit='MiB'>64</memory><os><type>hvm</type></os></domain>");
    inner_.start(space_.domain_name);
  }
  ~security_agent_stall() override {
    try {
      for (const auto& s : inner_.snapshots(space_.domain_name))
        inner_.delete_snapshot(space_.domain_name, s.name);
      inner_.destroy(space_.domain_name);
      inner_.undefine(space_.domain_name);
    } catch (...) {
    }
  }

  test_support::TempDir dir_;
  libvirt::LibvirtHypervisor inner_{libvirt::LibvirtOptions{"test:///default"}};
  Agent agent_{inner_};
  util::SystemProcessRunner runner_;
  image::Disks disks_{runner_};
  std::unique_ptr<image::ImageCache> cache_;
  NoBridges bridges_;
  std::unique_ptr<LibvirtNode> node_;
  store::Space space_;
};

TEST_F(security_agent_stall, AFreezeThatFailsIsThawedAndTheSnapshotIsBestEffortSayingWhy) {
  agent_.freeze_stalls = true;
  const auto taken = node_->take_snapshot(space_, "s1", false);
  EXPECT_TRUE(taken.best_effort);
  EXPECT_THAT(taken.best_effort_reason, HasSubstr("could not be frozen"));
  EXPECT_THAT(taken.best_effort_reason, HasSubstr("Guest agent not available for now"));
  EXPECT_EQ(agent_.calls, (std::vector<std::string>{"freeze", "thaw"}))
      << "a freeze that timed out is thawed at once";
  EXPECT_TRUE(taken.warning.empty());
  ASSERT_EQ(inner_.snapshots(space_.domain_name).size(), 1u);
}

TEST_F(security_agent_stall, AThawThatFailsAfterTheSnapshotKeepsItAndSaysSo) {
  agent_.thaw_stalls = true;
  const auto taken = node_->take_snapshot(space_, "s1", false);
  EXPECT_FALSE(taken.best_effort);
  EXPECT_THAT(taken.warning, HasSubstr("could not be thawed"));
  EXPECT_EQ(inner_.snapshots(space_.domain_name).size(), 1u) << "the good snapshot is kept";
}

TEST_F(security_agent_stall, ASnapshotThatFailsThawsTheGuest) {
  agent_.fail_snapshot = true;
  EXPECT_THROW(node_->take_snapshot(space_, "s1", false), std::runtime_error);
  EXPECT_EQ(agent_.calls, (std::vector<std::string>{"freeze", "thaw"}));
  EXPECT_EQ(agent_.frozen, 0);
}

// A clone's snapshot and its owner's at once: one freeze, snapshot and thaw after the other.
TEST_F(security_agent_stall, SnapshotsOfOneDomainDoNotOverlap) {
  std::thread other([&] { node_->take_snapshot(space_, "a", false); });
  node_->take_snapshot(space_, "b", false);
  other.join();
  EXPECT_FALSE(agent_.overlapped);
  EXPECT_EQ(agent_.calls, (std::vector<std::string>{"freeze", "thaw", "freeze", "thaw"}));
}

}  // namespace
}  // namespace bowline::engine
