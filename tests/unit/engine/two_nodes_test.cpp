// A second libvirt node is configuration, not code: two LibvirtNodes, each on its own libvirt
// (two test-driver instances) and images directory, run spaces side by side under one engine,
// which keeps one address range, one store and one event stream for both.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "engine/engine.hpp"
#include "engine/libvirt_node.hpp"
#include "libvirt/libvirt_hypervisor.hpp"
#include "util/clock.hpp"
#include "util/process.hpp"

namespace bowline::engine {
namespace {

namespace fs = std::filesystem;

class Bridges final : public HostProbe {
 public:
  bool bridge_exists(const std::string& name) const override { return name == "testbr0"; }
  std::vector<std::string> bridge_ports(const std::string&) const override { return {"eth0"}; }
};

// A libvirt of its own: the test driver loaded from a file is an instance no other connection
// shares (test:///default is one per process).
std::string private_test_uri(const fs::path& dir, const std::string& name) {
  const auto file = dir / (name + ".xml");
  std::ofstream(file) << "<node/>\n";
  return "test://" + file.string();
}

class TwoNodes : public ::testing::Test {
 protected:
  TwoNodes() {
    char pattern[] = "/tmp/bowline-two-nodes.XXXXXX";
    root_ = mkdtemp(pattern);
    fs::create_directories(root_ / "cache" / "cloud-images");
    fs::create_directories(root_ / "cache" / "base");
    const auto base = root_ / "cache" / "cloud-images" / "tiny.qcow2";
    EXPECT_EQ(std::system(("qemu-img create -q -f qcow2 " + base.string() + " 16M").c_str()), 0);
    store_ = std::make_unique<store::Store>(root_ / "bowline.db", clock_);
    cache_ = std::make_unique<image::ImageCache>(
        image::CacheOptions{root_ / "cache" / "cloud-images", root_ / "cache" / "base", {}, {}});
    disks_ = std::make_unique<image::Disks>(runner_);
    bus_ = std::make_unique<EventBus>(*store_);
    for (const std::string name : {"east", "west"}) {
      hypervisors_.push_back(std::make_unique<libvirt::LibvirtHypervisor>(
          libvirt::LibvirtOptions{private_test_uri(root_, name)}));
      fs::create_directories(root_ / name);
      LibvirtNodeSettings settings;
      settings.name = name;
      settings.node.domain_type = plan::DomainType::Qemu;
      settings.node.images_path = (root_ / name).string();
      settings.stop_timeout = std::chrono::seconds(5);
      nodes_.push_back(
          std::make_unique<LibvirtNode>(*hypervisors_.back(), *cache_, *disks_, host_, settings));
    }
    engine_ = std::make_unique<Engine>(*store_, *bus_, EngineSettings{});
    for (auto& node : nodes_) engine_->add_node(*node);
    engine_->start();
    alice_ = store_->users()
                 .create({"alice", "alice@example.org", "", std::string("pw"), "", {}, {}})
                 .id;
    store_->templates().create(
        "dev",
        "name: ${{ .space.name }}-vm\nimage: tiny\nmemory: 256M\nnetwork:\n"
        "  bridge: testbr0\n  cidr: 198.51.100.0/24\n  gateway: 198.51.100.1\n"
        "  ip_range_start: 198.51.100.10\n  ip_range_end: 198.51.100.20\n");
  }
  ~TwoNodes() override {
    engine_->wait_idle();
    engine_.reset();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  store::Space create(const std::string& name, const std::string& node) {
    const auto accepted = engine_->create_space({alice_, "dev", name, std::nullopt, true}, node);
    engine_->wait_idle();
    return *store_->spaces().get(accepted.space.id);
  }
  libvirt::Hypervisor& east() { return *hypervisors_[0]; }
  libvirt::Hypervisor& west() { return *hypervisors_[1]; }

  util::ManualClock clock_;
  util::SystemProcessRunner runner_;
  Bridges host_;
  fs::path root_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<image::ImageCache> cache_;
  std::unique_ptr<image::Disks> disks_;
  std::unique_ptr<EventBus> bus_;
  std::vector<std::unique_ptr<libvirt::LibvirtHypervisor>> hypervisors_;
  std::vector<std::unique_ptr<LibvirtNode>> nodes_;
  std::unique_ptr<Engine> engine_;
  std::int64_t alice_ = 0;
};

TEST_F(TwoNodes, EachSpaceIsMadeOnItsOwnNodeOnly) {
  const auto one = create("one", "");  // placed: as much free on both, the first wins
  const auto two = create("two", "west");
  ASSERT_EQ(one.state, store::SpaceState::Running) << one.error;
  ASSERT_EQ(two.state, store::SpaceState::Running) << two.error;
  EXPECT_EQ(one.node, "east");
  EXPECT_EQ(two.node, "west");
  // One address range, whatever the node.
  EXPECT_EQ(one.ip, "198.51.100.10");
  EXPECT_EQ(two.ip, "198.51.100.11");
  EXPECT_TRUE(east().lookup("one-vm").has_value());
  EXPECT_FALSE(east().lookup("two-vm").has_value());
  EXPECT_TRUE(west().lookup("two-vm").has_value());
  EXPECT_FALSE(west().lookup("one-vm").has_value());
  EXPECT_TRUE(fs::exists(root_ / "east" / "one-vm" / "disk.qcow2"));
  EXPECT_TRUE(fs::exists(root_ / "west" / "two-vm" / "disk.qcow2"));
  EXPECT_FALSE(fs::exists(root_ / "east" / "two-vm"));
}

TEST_F(TwoNodes, PowerAndDeleteGoToTheSpacesNode) {
  const auto one = create("one", "east");
  const auto two = create("two", "west");
  engine_->stop_space(two.id);
  engine_->wait_idle();
  EXPECT_EQ(store_->spaces().get(two.id)->state, store::SpaceState::Stopped);
  EXPECT_EQ(west().state("two-vm").state, libvirt::DomainState::Shutoff);
  EXPECT_EQ(east().state("one-vm").state, libvirt::DomainState::Running);
  // The audit asks each node about its own spaces only: nothing drifts, nothing is an orphan.
  engine_->audit();
  engine_->wait_idle();
  EXPECT_EQ(store_->spaces().get(one.id)->state, store::SpaceState::Running);
  EXPECT_EQ(store_->spaces().get(two.id)->state, store::SpaceState::Stopped);
  for (const auto& e : store_->events().events_since(0, 10000))
    EXPECT_NE(e.kind, "reconcile.orphan") << e.payload.dump();
  engine_->delete_space(two.id);
  engine_->wait_idle();
  EXPECT_FALSE(west().lookup("two-vm").has_value());
  EXPECT_FALSE(fs::exists(root_ / "west" / "two-vm"));
  EXPECT_TRUE(east().lookup("one-vm").has_value());
}

TEST_F(TwoNodes, ADomainLeftOnOneNodeIsThatNodesOrphan) {
  create("one", "east");
  // What the other node's libvirt holds under that name is not this space's business, and a
  // domain bowline made on west that the store does not know is reported as west's.
  const auto xml = east().domain_xml("one-vm");
  west().define(xml);
  engine_->audit();
  engine_->wait_idle();
  int orphans = 0;
  for (const auto& e : store_->events().events_since(0, 10000))
    if (e.kind == "reconcile.orphan") {
      ++orphans;
      EXPECT_EQ(e.payload["node"], "west");
      EXPECT_EQ(e.payload["domain"], "one-vm");
    }
  EXPECT_EQ(orphans, 1);
}

TEST_F(TwoNodes, AnUnknownNodeIsRefusedWithTheNodesThereAre) {
  try {
    create("one", "north");
    FAIL() << "not refused";
  } catch (const EngineError& e) {
    EXPECT_EQ(e.kind(), EngineError::Kind::Invalid);
    EXPECT_STREQ(e.what(), "no node named north (nodes: east, west)");
  }
  EXPECT_TRUE(store_->spaces().list().empty());
}

TEST_F(TwoNodes, APlacementNoNodeCanTakeNamesEachNodesReason) {
  store_->templates().create("lab",
                             "name: ${{ .space.name }}-vm\nimage: tiny\nmemory: 256M\n"
                             "network: {mode: nat, bridge: lab}\n");
  try {
    engine_->create_space({alice_, "lab", "one", std::nullopt, true}, "");
    FAIL() << "not refused";
  } catch (const EngineError& e) {
    EXPECT_EQ(e.kind(), EngineError::Kind::Conflict);
    const std::string what = e.what();
    EXPECT_NE(what.find("no node can run template lab now:"), std::string::npos) << what;
    EXPECT_NE(what.find("\n  east: libvirt network lab does not exist"), std::string::npos) << what;
    EXPECT_NE(what.find("\n  west: libvirt network lab does not exist"), std::string::npos) << what;
  }
  EXPECT_TRUE(store_->spaces().list().empty());
  EXPECT_TRUE(east().list().empty());
  EXPECT_TRUE(west().list().empty());
}

}  // namespace
}  // namespace bowline::engine
