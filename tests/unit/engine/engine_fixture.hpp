// An engine on libvirt's test driver with a real SQLite file, real qcow2 files made by qemu-img
// and a disk-objects directory: the fixture of the state tests (disks, snapshots, clones).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "engine/engine.hpp"
#include "engine/libvirt_node.hpp"
#include "libvirt/libvirt_hypervisor.hpp"
#include "util/clock.hpp"
#include "util/process.hpp"
#include "util/timer.hpp"

namespace bowline::engine::fixture {

namespace fs = std::filesystem;

class Bridges final : public HostProbe {
 public:
  bool bridge_exists(const std::string& name) const override { return name == "testbr0"; }
  std::vector<std::string> bridge_ports(const std::string&) const override { return {"eth0"}; }
};

inline constexpr const char* kNetwork =
    "network:\n  bridge: testbr0\n  cidr: 198.51.100.0/24\n  gateway: 198.51.100.10\n"
    "  ip_range_start: 198.51.100.11\n  ip_range_end: 198.51.100.14\n";

// libvirt's test driver reports no CPU time: its domains use `cpu_ns` each (0% by default, so
// idle), and a test moves it on to make them busy.
class TestDriver final : public libvirt::LibvirtHypervisor {
 public:
  TestDriver() : LibvirtHypervisor(libvirt::LibvirtOptions{"test:///default"}) {}
  std::vector<libvirt::DomainStats> all_domain_stats() override {
    auto all = LibvirtHypervisor::all_domain_stats();
    for (auto& s : all) s.cpu_time_ns = cpu_ns.load();
    return all;
  }
  std::atomic<std::uint64_t> cpu_ns{1'000'000'000};
};

class EngineFixture : public ::testing::Test {
 protected:
  EngineFixture() {
    char pattern[] = "/tmp/bowline-engine.XXXXXX";
    root_ = mkdtemp(pattern);
    images_ = root_ / "images";
    fs::create_directories(images_ / "cloud-images");
    fs::create_directories(images_ / "base");
    const auto base = images_ / "cloud-images" / "tiny.qcow2";
    EXPECT_EQ(std::system(("qemu-img create -q -f qcow2 " + base.string() + " 16M").c_str()), 0);
    store_ = std::make_unique<store::Store>(root_ / "bowline.db", clock_);
    hypervisor_ = std::make_unique<TestDriver>();
    cache_ = std::make_unique<image::ImageCache>(
        image::CacheOptions{images_ / "cloud-images", images_ / "base", {}, {}});
    disks_ = std::make_unique<image::Disks>(runner_);
    files_ = std::make_unique<DiskFiles>(images_, *cache_, *disks_);
    bus_ = std::make_unique<EventBus>(*store_);
    LibvirtNodeSettings local;
    local.node.domain_type = plan::DomainType::Qemu;
    local.node.images_path = images_.string();
    local.stop_timeout = std::chrono::seconds(5);
    local.timer = &timer_;
    local.host_addresses = [] { return std::set<std::uint32_t>{}; };
    node_ = std::make_unique<LibvirtNode>(*hypervisor_, *cache_, *disks_, host_, local);
    start_engine();
    alice_ = store_->users().create({"alice", "", "", std::nullopt, "", {}, {}}).id;
    bob_ = store_->users().create({"bob", "", "", std::nullopt, "", {}, {}}).id;
    static std::atomic<int> counter{0};
    suffix_ = std::to_string(getpid()) + "-" + std::to_string(counter++);
  }

  ~EngineFixture() override {
    engine_->wait_idle();
    for (const auto& space : store_->spaces().list()) {
      try {
        hypervisor_->destroy(space.domain_name);
        hypervisor_->undefine(space.domain_name);
      } catch (...) {
      }
    }
    engine_.reset();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  // A new engine on the same store and node, as after a restart of the server: start()
  // reconciles what the previous one left.
  void start_engine() {
    if (engine_) engine_->wait_idle();
    engine_.reset();
    EngineSettings settings;
    settings.timer = &timer_;
    // Not this machine's addresses: bridges other tests make must not shrink a test's range.
    settings.host_addresses = [] { return std::set<std::uint32_t>{}; };
    // The sampler's own rounds are a day apart in the manual time: tests that need rounds
    // call stats().sample() themselves, at the times they choose.
    settings.stats.interval = std::chrono::hours(24);
    settings.stats.history = std::chrono::hours(24);
    settings.pools_wait_suspended = pools_wait_suspended_;
    engine_ = std::make_unique<Engine>(*store_, *bus_, settings);
    engine_->add_node(*node_);
    engine_->set_disk_files(*files_);
    engine_->start();
  }

  std::string add_template(const std::string& yaml) {
    const auto name = "t" + suffix_ + "-" + std::to_string(templates_++);
    store_->templates().create(
        name, "name: ${{ .space.name }}-" + suffix_ + "\nmemory: 256M\n" + kNetwork + yaml);
    return name;
  }

  store::Disk blank(const std::string& name, std::int64_t owner, std::uint64_t bytes = 8 << 20) {
    CreateDiskRequest r;
    r.owner_id = owner;
    r.name = name;
    r.size_bytes = bytes;
    return engine_->create_disk(r);
  }

  store::Space space(const std::string& id) { return *store_->spaces().get(id); }

  Accepted create(const std::string& tmpl, const std::string& name, bool start = true) {
    auto accepted = engine_->create_space({alice_, tmpl, name, std::nullopt, start});
    engine_->wait_idle();
    return accepted;
  }

  static std::string message_of(const std::function<void()>& f, EngineError::Kind kind) {
    try {
      f();
    } catch (const EngineError& e) {
      EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "no EngineError";
    return "";
  }

  util::ManualClock clock_;
  util::ManualTimer timer_;
  util::SystemProcessRunner runner_;
  Bridges host_;
  fs::path root_, images_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<TestDriver> hypervisor_;
  std::unique_ptr<image::ImageCache> cache_;
  std::unique_ptr<image::Disks> disks_;
  std::unique_ptr<DiskFiles> files_;
  std::unique_ptr<EventBus> bus_;
  std::unique_ptr<LibvirtNode> node_;
  std::unique_ptr<Engine> engine_;
  std::int64_t alice_ = 0, bob_ = 0;
  bool pools_wait_suspended_ = true;  // server.pools.wait; start_engine() again after a change
  std::string suffix_;
  int templates_ = 0;
};

}  // namespace bowline::engine::fixture
