// Two creates for one user at the same moment, against libvirt's test driver: both are held at
// admission (libvirt's lookup of the machine name) until both have reached it, so each has
// passed every check that comes before the row is written. The quota is counted inside the
// transaction that writes the row, so only one of them gets the user's last room; a count
// made any earlier (before admission) would let both through.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>

#include "engine/engine.hpp"
#include "engine/libvirt_node.hpp"
#include "forwarding_hypervisor.hpp"
#include "libvirt/libvirt_hypervisor.hpp"
#include "util/clock.hpp"
#include "util/process.hpp"

namespace bowline::engine {
namespace {

namespace fs = std::filesystem;

class NoBridges final : public HostProbe {
 public:
  bool bridge_exists(const std::string&) const override { return true; }
  std::vector<std::string> bridge_ports(const std::string&) const override { return {"eth0"}; }
};

// Holds the first `expected` lookups of names with `marker` until all of them have arrived.
class Rendezvous final : public ForwardingHypervisor {
 public:
  Rendezvous(libvirt::Hypervisor& inner, std::string marker, int expected)
      : ForwardingHypervisor(inner), marker_(std::move(marker)), expected_(expected) {}

  std::optional<libvirt::DomainInfo> lookup(const std::string& name) override {
    if (name.find(marker_) != std::string::npos) {
      std::unique_lock lock(mutex_);
      if (arrived_ < expected_) {
        ++arrived_;
        wake_.notify_all();
        // A cap only so that a broken engine fails the test instead of hanging it.
        met_ =
            wake_.wait_for(lock, std::chrono::seconds(30), [&] { return arrived_ >= expected_; }) ||
            met_;
      }
    }
    return ForwardingHypervisor::lookup(name);
  }
  bool met() {
    std::lock_guard lock(mutex_);
    return met_ && arrived_ >= expected_;
  }

 private:
  std::string marker_;
  int expected_;
  std::mutex mutex_;
  std::condition_variable wake_;
  int arrived_ = 0;
  bool met_ = false;
};

TEST(security_quota_race, TwoCreatesHeldTogetherAtAdmissionCannotBothTakeTheLastRoom) {
  char pattern[] = "/tmp/bowline-quota-race.XXXXXX";
  const fs::path root = mkdtemp(pattern);
  const auto images = root / "images";
  fs::create_directories(images / "cloud-images");
  ASSERT_EQ(std::system(("qemu-img create -q -f qcow2 " +
                         (images / "cloud-images" / "tiny.qcow2").string() + " 16M")
                            .c_str()),
            0);
  util::SystemClock clock;
  util::SystemProcessRunner runner;
  NoBridges host;
  store::Store store(root / "bowline.db", clock);
  libvirt::LibvirtHypervisor real(libvirt::LibvirtOptions{"test:///default"});
  const auto marker = "race" + std::to_string(getpid()) + "-";
  Rendezvous seam(real, marker, 2);
  image::ImageCache cache({images / "cloud-images", images / "base", {}, {}});
  image::Disks disks(runner);
  EventBus bus(store);
  LibvirtNodeSettings local;
  local.node.domain_type = plan::DomainType::Qemu;
  local.node.images_path = images.string();
  LibvirtNode node(seam, cache, disks, host, local);
  EngineSettings settings;
  settings.reconcile_interval = std::chrono::seconds(0);
  {
    Engine engine(store, bus, settings);
    engine.add_node(node);
    engine.start();
    store.templates().create("t", "name: " + marker +
                                      "${{ .space.name }}\nimage: tiny\n"
                                      "memory: 256M\nnetwork:\n  mode: nat\n  bridge: default\n");
    const auto alice = store.users().create({"alice", "", "", std::nullopt, "", {}, {}}).id;
    store.users().set_quota(alice, store::Quota{1, std::nullopt, std::nullopt, std::nullopt});

    std::atomic<int> made{0}, refused{0};
    std::string refusal;
    std::mutex refusal_mutex;
    std::vector<std::thread> racers;
    for (const char* name : {"a", "b"})
      racers.emplace_back([&, name] {
        try {
          engine.create_space({alice, "t", name, std::nullopt, false});
          ++made;
        } catch (const EngineError& e) {
          if (e.kind() == EngineError::Kind::Forbidden) ++refused;
          std::lock_guard lock(refusal_mutex);
          refusal = e.what();
        }
      });
    for (auto& t : racers) t.join();
    engine.wait_idle();
    EXPECT_TRUE(seam.met()) << "the two creates did not meet at admission";
    EXPECT_EQ(made, 1);
    EXPECT_EQ(refused, 1) << refusal;
    EXPECT_EQ(refusal, "quota: spaces 1 used + 1 asked exceeds alice's 1 (set by user set-quota)");
    EXPECT_EQ(store.spaces().list_for_owner(alice).size(), 1u);
    for (const auto& space : store.spaces().list()) {
      try {
        real.undefine(space.domain_name);
      } catch (...) {
      }
    }
  }
  std::error_code ec;
  fs::remove_all(root, ec);
}

}  // namespace
}  // namespace bowline::engine
