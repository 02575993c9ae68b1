// The engine against libvirt's test driver (a real libvirt, in-process, no guests), a real
// SQLite file, real qcow2 files made by qemu-img and a host probe that says which bridges exist.
#include "engine/engine.hpp"
#include "engine/libvirt_node.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "forwarding_hypervisor.hpp"
#include "libvirt/libvirt_hypervisor.hpp"
#include "util/clock.hpp"
#include "util/process.hpp"
#include "util/timer.hpp"

namespace bowline::engine {
namespace {

namespace fs = std::filesystem;

class FakeHost final : public HostProbe {
 public:
  std::set<std::string> bridges{"testbr0"};
  bool bridge_exists(const std::string& name) const override { return bridges.count(name) != 0; }
  std::vector<std::string> bridge_ports(const std::string&) const override { return {"eth0"}; }
};

std::string bridged_template(
    const std::string& image = "tiny", const std::string& memory = "256M",
    const std::string& range = "198.51.100.10\n  ip_range_end: 198.51.100.14") {
  return "image: " + image + "\nmemory: " + memory +
         "\nnetwork:\n  bridge: testbr0\n  cidr: 198.51.100.0/24\n  gateway: 198.51.100.10\n"
         "  ip_range_start: " +
         range + "\n";
}

class EngineTest : public ::testing::Test {
 protected:
  explicit EngineTest(const std::string& uri = "test:///default") {
    char pattern[] = "/tmp/bowline-engine-test.XXXXXX";
    root_ = mkdtemp(pattern);
    images_ = root_ / "images";
    fs::create_directories(images_ / "cloud-images");
    fs::create_directories(images_ / "base");
    const auto base = images_ / "cloud-images" / "tiny.qcow2";
    EXPECT_EQ(std::system(("qemu-img create -q -f qcow2 " + base.string() + " 16M").c_str()), 0);
    store_ = std::make_unique<store::Store>(root_ / "bowline.db", clock_);
    hypervisor_ = std::make_unique<libvirt::LibvirtHypervisor>(libvirt::LibvirtOptions{uri});
    cache_ = std::make_unique<image::ImageCache>(
        image::CacheOptions{images_ / "cloud-images", images_ / "base", {}, {}});
    disks_ = std::make_unique<image::Disks>(runner_);
    bus_ = std::make_unique<EventBus>(*store_);
    start_engine(*hypervisor_);
    alice_ = store_->users()
                 .create({"alice", "alice@example.org", "", std::string("pw"), "", {}, {}})
                 .id;
    // Names on the test driver are per process: keep each test's domains apart.
    static std::atomic<int> counter{0};
    suffix_ = std::to_string(getpid()) + "-" + std::to_string(counter++);
  }

  ~EngineTest() override {
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

  // A new engine (as after a restart of the server) on `hypervisor`; start() reconciles.
  void start_engine(libvirt::Hypervisor& hypervisor) {
    if (engine_) engine_->wait_idle();
    engine_.reset();
    node_.reset();
    LibvirtNodeSettings local;
    local.node.domain_type = plan::DomainType::Qemu;
    local.node.images_path = images_.string();
    local.stop_timeout = std::chrono::seconds(5);
    local.dedicated_cpus = dedicated_cpus_;
    local.timer = &timer_;  // time moves when a test says so
    node_ = std::make_unique<LibvirtNode>(hypervisor, *cache_, *disks_, host_, local);
    EngineSettings settings;
    settings.timer = &timer_;
    engine_ = std::make_unique<Engine>(*store_, *bus_, settings);
    engine_->add_node(*node_);
    engine_->start();
  }

  std::string add_template(const std::string& yaml) {
    const auto name = "t" + suffix_ + "-" + std::to_string(templates_++);
    store_->templates().create(name, "name: ${{ .space.name }}-" + suffix_ + "\n" + yaml);
    return name;
  }

  Accepted create(const std::string& tmpl, const std::string& name,
                  std::optional<std::string> ip = {}, bool start = true) {
    auto accepted = engine_->create_space({alice_, tmpl, name, std::move(ip), start});
    engine_->wait_idle();
    return accepted;
  }

  store::Space space(const std::string& id) { return *store_->spaces().get(id); }

  std::vector<std::string> state_events(const std::string& id) {
    std::vector<std::string> states;
    for (const auto& e : store_->events().events_since(0, 10000))
      if (e.space_id == id && e.kind == "space.state") states.push_back(e.payload["state"]);
    return states;
  }

  util::ManualClock clock_;
  util::ManualTimer timer_;
  util::SystemProcessRunner runner_;
  FakeHost host_;
  fs::path root_, images_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<libvirt::LibvirtHypervisor> hypervisor_;
  std::unique_ptr<image::ImageCache> cache_;
  std::unique_ptr<image::Disks> disks_;
  std::unique_ptr<EventBus> bus_;
  std::unique_ptr<libvirt::Hypervisor> wrapper_;  // a test's own seam; outlives engine_
  std::unique_ptr<LibvirtNode> node_;
  std::unique_ptr<Engine> engine_;
  std::int64_t alice_ = 0;
  std::vector<unsigned> dedicated_cpus_;  // server.kvm.dedicated_cpus for the next start_engine
  std::string suffix_;
  int templates_ = 0;
};

TEST_F(EngineTest, BridgedSpaceIsCreatedWithTheNextFreeAddressAndRuns) {
  const auto tmpl = add_template(bridged_template());
  const auto accepted = create(tmpl, "dev");
  const auto s = space(accepted.space.id);
  EXPECT_EQ(s.state, store::SpaceState::Running) << s.error;
  // .10 is the gateway: never handed out.
  EXPECT_EQ(s.ip, "198.51.100.11");
  const auto dir = images_ / s.domain_name;
  EXPECT_TRUE(fs::exists(dir / "disk.qcow2"));
  EXPECT_TRUE(fs::exists(dir / "seed.iso"));
  const auto info = hypervisor_->lookup(s.domain_name);
  ASSERT_TRUE(info.has_value());
  ASSERT_TRUE(info->metadata.has_value());
  EXPECT_EQ(info->metadata->space_id, s.id);
  EXPECT_EQ(state_events(s.id), (std::vector<std::string>{"creating", "running"}));
  const auto op = store_->operations().get(accepted.operation_id);
  EXPECT_EQ(op->state, store::OperationState::Succeeded);
  EXPECT_EQ(op->progress, 100);
}

TEST_F(EngineTest, AGivenAddressIsCheckedAndKept) {
  const auto tmpl = add_template(bridged_template());
  EXPECT_EQ(space(create(tmpl, "a", "198.51.100.13").space.id).ip, "198.51.100.13");
  EXPECT_THROW(create(tmpl, "b", "198.51.100.13"), EngineError);   // held
  EXPECT_THROW(create(tmpl, "c", "198.51.100.10"), EngineError);   // the gateway
  EXPECT_THROW(create(tmpl, "d", "198.51.100.255"), EngineError);  // broadcast
  EXPECT_EQ(store_->spaces().list().size(), 1u);                   // refused creates left no row
}

TEST_F(EngineTest, MissingImageFailsAndLeavesNothingBehind) {
  const auto tmpl = add_template(bridged_template("no-such-image"));
  const auto accepted = create(tmpl, "dev");
  const auto s = space(accepted.space.id);
  EXPECT_EQ(s.state, store::SpaceState::Error);
  EXPECT_NE(s.error.find("no-such-image"), std::string::npos) << s.error;
  EXPECT_FALSE(hypervisor_->lookup(s.domain_name).has_value());
  EXPECT_FALSE(fs::exists(images_ / s.domain_name));
  EXPECT_TRUE(store_->leases().leases_of(s.id).empty());
  EXPECT_FALSE(s.ip.has_value());
  EXPECT_EQ(store_->operations().get(accepted.operation_id)->state, store::OperationState::Failed);
}

TEST_F(EngineTest, MissingBridgeIsRefusedBeforeAnythingIsMade) {
  host_.bridges.clear();
  const auto tmpl = add_template(bridged_template());
  try {
    create(tmpl, "dev");
    FAIL() << "created a space on a missing bridge";
  } catch (const EngineError& e) {
    EXPECT_NE(std::string(e.what()).find("bridge testbr0 does not exist"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(store_->spaces().list().empty());
}

// knot's space directories may share the images path: a directory that is no space's is never
// adopted (its disk would become this space's) nor removed by a failed create.
TEST_F(EngineTest, ADirectoryThatIsNoSpacesIsRefusedAndKept) {
  const auto tmpl = add_template(bridged_template());
  const auto dir = images_ / ("dev-" + suffix_);
  fs::create_directories(dir);
  std::ofstream(dir / "disk.qcow2") << "someone else's disk";
  try {
    create(tmpl, "dev");
    FAIL() << "created a space over a directory that is not bowline's";
  } catch (const EngineError& e) {
    EXPECT_EQ(e.kind(), EngineError::Kind::Conflict);
    EXPECT_NE(std::string(e.what()).find("belongs to no space of this server"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(store_->spaces().list().empty());
  EXPECT_TRUE(fs::exists(dir / "disk.qcow2"));
}

TEST_F(EngineTest, StopAndStartKeepTheDisk) {
  const auto tmpl = add_template(bridged_template());
  const auto id = create(tmpl, "dev").space.id;
  const auto disk = images_ / space(id).domain_name / "disk.qcow2";
  const auto inode_before = fs::last_write_time(disk);
  engine_->stop_space(id);
  engine_->wait_idle();
  EXPECT_EQ(space(id).state, store::SpaceState::Stopped);
  EXPECT_EQ(hypervisor_->state(space(id).domain_name).state, libvirt::DomainState::Shutoff);
  engine_->start_space(id);
  engine_->wait_idle();
  EXPECT_EQ(space(id).state, store::SpaceState::Running) << space(id).error;
  EXPECT_EQ(fs::last_write_time(disk), inode_before);  // the same overlay, not a new one
}

TEST_F(EngineTest, ATemplateChangeIsAppliedAtTheNextStartKeepingTheMac) {
  const auto tmpl = add_template(bridged_template());
  const auto id = create(tmpl, "dev").space.id;
  const auto domain = space(id).domain_name;
  const auto mac_of = [&] {
    const auto xml = hypervisor_->domain_xml(domain, true);
    const auto at = xml.find("mac address='");
    return xml.substr(at + 13, 17);
  };
  const auto mac = mac_of();
  const auto t = store_->templates().find_by_name(tmpl);
  store_->templates().update(
      t->id, "name: ${{ .space.name }}-" + suffix_ + "\n" + bridged_template("tiny", "512M"));
  EXPECT_TRUE(engine_->describe(id).redefine_pending);
  engine_->stop_space(id);
  engine_->start_space(id);
  engine_->wait_idle();
  EXPECT_FALSE(engine_->describe(id).redefine_pending);
  EXPECT_NE(hypervisor_->domain_xml(domain, true).find("<memory unit='KiB'>524288</memory>"),
            std::string::npos);
  EXPECT_EQ(mac_of(), mac);
}

// security: a server whose operator set aside no address for guests' ports (no forwarder)
// publishes none, and a space that asks for them is refused saying why, leaving nothing.
class security_external_address : public EngineTest {};
TEST_F(security_external_address, NoAddressSetAsideNoPortsAndTheCreateSaysWhy) {
  const auto tmpl = add_template(
      "image: tiny\nmemory: 256M\nnetwork: {mode: nat, bridge: default}\nexternal: true\n"
      "externalPorts: [22]\n");
  try {
    create(tmpl, "web");
    ADD_FAILURE() << "a space with external ports was made without an address for them";
  } catch (const EngineError& e) {
    EXPECT_NE(std::string(e.what()).find("server.external_address"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(store_->spaces().list().empty());
}

// External ports of a NAT space: held for its life, forwarded while it runs (the test driver
// gives each domain a lease in 192.168.122.0/24).
TEST_F(EngineTest, ExternalPortsAreForwardedWhileTheSpaceRuns) {
  struct Recorder final : PortForwarder {
    std::mutex mutex;
    std::vector<std::vector<PortForward>> sets;
    void apply(const std::vector<PortForward>& forwards) override {
      std::lock_guard lock(mutex);
      sets.push_back(forwards);
    }
    std::vector<PortForward> last() {
      std::lock_guard lock(mutex);
      return sets.empty() ? std::vector<PortForward>{} : sets.back();
    }
  };
  Recorder recorder;
  engine_->set_port_forwarder(recorder);
  const auto tmpl = add_template(
      "image: tiny\nmemory: 256M\nnetwork: {mode: nat, bridge: default}\nexternal: true\n"
      "externalPorts: [22, 8080]\n");
  const auto id = create(tmpl, "web").space.id;
  auto wait_for = [&](auto done) {
    for (int i = 0; i < 100 && !done(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return done();
  };
  ASSERT_TRUE(wait_for([&] { return recorder.last().size() == 2; }));
  auto forwards = recorder.last();
  EXPECT_EQ(forwards[0].space_id, id);
  EXPECT_EQ(forwards[0].host_port, 20000);
  EXPECT_EQ(forwards[0].guest_port, 22);
  EXPECT_EQ(forwards[0].guest_address,
            hypervisor_->interface_addresses(space(id).domain_name, libvirt::AddressSource::Lease)
                .at(0)
                .address);
  EXPECT_EQ(forwards[1].host_port, 20001);
  EXPECT_EQ(forwards[1].guest_port, 8080);
  auto view = engine_->describe(id);
  ASSERT_EQ(view.external_ports.size(), 2u);
  EXPECT_TRUE(view.external_ports[0].active);

  engine_->stop_space(id);
  engine_->wait_idle();
  EXPECT_TRUE(recorder.last().empty()) << "a stopped space's ports are withdrawn";
  EXPECT_FALSE(engine_->describe(id).external_ports[0].active);
  engine_->start_space(id);
  engine_->wait_idle();
  ASSERT_TRUE(wait_for([&] { return recorder.last().size() == 2; }));
  EXPECT_EQ(recorder.last()[0].host_port, 20000) << "the same host port after a restart";

  // The template publishes another port now: pending, then applied at the next start, the
  // kept port on its host port, the dropped one released.
  const auto t = store_->templates().find_by_name(tmpl);
  store_->templates().update(t->id, "name: ${{ .space.name }}-" + suffix_ +
                                        "\nimage: tiny\nmemory: 256M\nnetwork: {mode: nat, bridge: "
                                        "default}\nexternal: true\nexternalPorts: [22, 9090]\n");
  bool pending = false;
  for (const auto& c : engine_->describe(id).pending) pending = pending || c.part == "external";
  EXPECT_TRUE(pending);
  engine_->restart_space(id);
  engine_->wait_idle();
  ASSERT_TRUE(wait_for([&] {
    const auto f = recorder.last();
    return f.size() == 2 && f[1].guest_port == 9090;
  }));
  EXPECT_EQ(recorder.last()[0].host_port, 20000) << "22 keeps its host port";
  EXPECT_EQ(recorder.last()[1].host_port, 20001) << "8080's port was released and reused";

  engine_->delete_space(id);
  engine_->wait_idle();
  EXPECT_TRUE(recorder.last().empty());
  EXPECT_TRUE(store_->host_ports().of_space(id).empty());
}

// A host that refuses to forward: the space runs, and space info says why its ports are not
// published (not only a log line).
TEST_F(EngineTest, AForwardThatTheHostRefusesIsShownOnTheSpace) {
  struct Refuses final : PortForwarder {
    void apply(const std::vector<PortForward>& forwards) override {
      if (!forwards.empty()) throw std::runtime_error("net.ipv4.ip_forward is 0");
    }
  } refuses;
  engine_->set_port_forwarder(refuses);
  const auto tmpl = add_template(
      "image: tiny\nmemory: 256M\nnetwork: {mode: nat, bridge: default}\nexternal: true\n");
  const auto id = create(tmpl, "web").space.id;
  std::string error;
  for (int i = 0; i < 100 && error.empty(); ++i) {
    error = engine_->describe(id).external_error;
    if (error.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(error.find("net.ipv4.ip_forward is 0"), std::string::npos) << error;
  EXPECT_EQ(space(id).state, store::SpaceState::Running);
  engine_->delete_space(id);
  engine_->wait_idle();
}

// space info says which changes wait for the next start, and which reach new spaces only.
TEST_F(EngineTest, PendingChangesSayWhatChangedAndWhenItArrives) {
  const auto tmpl = add_template(bridged_template() + "environment:\n  - A=1\n");
  const auto id = create(tmpl, "dev").space.id;
  EXPECT_TRUE(engine_->describe(id).pending.empty());
  const auto t = store_->templates().find_by_name(tmpl);
  store_->templates().update(t->id, "name: ${{ .space.name }}-" + suffix_ + "\n" +
                                        bridged_template() +
                                        "environment:\n  - A=2\ncloudInit: |\n  #cloud-config\n"
                                        "  runcmd: [date]\n");
  store_->users().add_ssh_key(alice_, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINEW alice@new");
  auto parts = [&] {
    std::map<std::string, plan::Applies> out;
    for (const auto& c : engine_->describe(id).pending) out[c.part] = c.applies;
    return out;
  };
  EXPECT_EQ(parts(),
            (std::map<std::string, plan::Applies>{{"account", plan::Applies::NextStart},
                                                  {"cloudInit", plan::Applies::NextStart},
                                                  {"environment", plan::Applies::NextStart}}));
  EXPECT_EQ(space(id).instance_id, "") << "the first instance until the cloudInit changes";
  engine_->restart_space(id);
  engine_->wait_idle();
  // A start applies it all; the new cloudInit as a new cloud-init instance, kept after.
  EXPECT_TRUE(parts().empty());
  const auto instance = space(id).instance_id;
  EXPECT_TRUE(instance.starts_with(plan::base_instance_id(id) + "-")) << instance;
  engine_->restart_space(id);
  engine_->wait_idle();
  EXPECT_EQ(space(id).instance_id, instance) << "an unchanged cloudInit is no new instance";
}

// One rule for every address a bridged space may get (engine/ipam): inside the template's range,
// not only its subnet, and not the network's, broadcast or gateway address.
TEST_F(EngineTest, AnAddressMustBeInsideTheTemplatesRange) {
  const auto tmpl = add_template(bridged_template());  // range .10-.14, gateway .10
  try {
    create(tmpl, "outside", std::string("198.51.100.50"));
    FAIL() << "an address outside the range was given";
  } catch (const EngineError& e) {
    EXPECT_EQ(e.kind(), EngineError::Kind::Invalid);
    EXPECT_NE(std::string(e.what()).find("outside the template's address range "
                                         "198.51.100.10-198.51.100.14"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(store_->spaces().list().empty()) << "a refused create leaves nothing";
  const auto id = create(tmpl, "inside", std::string("198.51.100.12"), false).space.id;
  EXPECT_EQ(space(id).ip, "198.51.100.12");
  try {
    engine_->set_ip(id, "198.51.100.200");
    FAIL() << "set-ip took an address outside the range";
  } catch (const EngineError& e) {
    EXPECT_NE(std::string(e.what()).find("outside the template's address range"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(space(id).ip, "198.51.100.12");
}

TEST_F(EngineTest, TheAddressChangesOnlyWhileStopped) {
  const auto tmpl = add_template(bridged_template());
  const auto id = create(tmpl, "dev").space.id;
  EXPECT_THROW(engine_->set_ip(id, "198.51.100.14"), EngineError);
  engine_->stop_space(id);
  engine_->wait_idle();
  EXPECT_THROW(engine_->set_ip(id, "198.51.100.10"), EngineError);  // the gateway
  engine_->set_ip(id, "198.51.100.14");
  EXPECT_EQ(space(id).ip, "198.51.100.14");
  EXPECT_EQ(store_->leases().leases_of(id).size(), 1u);
  const auto other = create(tmpl, "other").space.id;
  EXPECT_NE(space(other).ip, "198.51.100.14");
}

TEST_F(EngineTest, DeleteRemovesDomainFilesAndAddress) {
  const auto tmpl = add_template(bridged_template());
  const auto s = space(create(tmpl, "dev").space.id);
  engine_->delete_space(s.id);
  engine_->wait_idle();
  EXPECT_FALSE(store_->spaces().get(s.id).has_value());
  EXPECT_FALSE(hypervisor_->lookup(s.domain_name).has_value());
  EXPECT_FALSE(fs::exists(images_ / s.domain_name));
  EXPECT_FALSE(store_->leases().holder("bridge:testbr0", 0xC633640B).has_value());
}

TEST_F(EngineTest, AnAlwaysSpaceThatStopsInsideTheGuestIsStartedAgain) {
  const auto tmpl = add_template(bridged_template());  // runStrategy defaults to Always
  const auto s = space(create(tmpl, "dev").space.id);
  hypervisor_->destroy(s.domain_name);  // as if the guest powered off
  for (int i = 0;
       i < 50 && hypervisor_->state(s.domain_name).state != libvirt::DomainState::Running; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    engine_->wait_idle();
  }
  EXPECT_EQ(hypervisor_->state(s.domain_name).state, libvirt::DomainState::Running);
  EXPECT_EQ(space(s.id).state, store::SpaceState::Running);
}

TEST_F(EngineTest, ARestartsOwnShutdownDoesNotStartTheSpaceAgain) {
  const auto tmpl = add_template(bridged_template());  // Always: restarts what stops by itself
  const auto s = space(create(tmpl, "dev").space.id);
  engine_->restart_space(s.id);
  // The restart's shutdown event reaches the engine after the restart has finished: let every
  // event arrive and be handled.
  for (int i = 0; i < 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    engine_->wait_idle();
  }
  EXPECT_EQ(space(s.id).state, store::SpaceState::Running);
  int starts = 0;
  for (const auto& op : store_->operations().list_for_space(s.id)) starts += op.kind == "start";
  EXPECT_EQ(starts, 0) << "a stale stop event started the space again";
  const auto states = state_events(s.id);
  ASSERT_FALSE(states.empty());
  EXPECT_EQ(states.back(), "running");
  EXPECT_EQ(std::count(states.begin(), states.end(), "stopped"), 0);
}

// libvirt autostarts a domain when libvirtd starts (a host reboot): only while the space is to
// run. A stopped runStrategy Always space must stay stopped.
TEST_F(EngineTest, AutostartFollowsTheDesiredState) {
  const auto tmpl = add_template(bridged_template());  // runStrategy Always by default
  const auto s = space(create(tmpl, "always").space.id);
  EXPECT_TRUE(hypervisor_->lookup(s.domain_name)->autostart);
  engine_->stop_space(s.id);
  engine_->wait_idle();
  EXPECT_FALSE(hypervisor_->lookup(s.domain_name)->autostart) << "a stopped space came back";
  engine_->start_space(s.id);
  engine_->wait_idle();
  EXPECT_TRUE(hypervisor_->lookup(s.domain_name)->autostart);
  // A domain an older server left with autostart on while its space is stopped.
  engine_->stop_space(s.id);
  engine_->wait_idle();
  hypervisor_->set_autostart(s.domain_name, true);
  engine_->audit();
  engine_->wait_idle();
  EXPECT_FALSE(hypervisor_->lookup(s.domain_name)->autostart);
  EXPECT_EQ(space(s.id).state, store::SpaceState::Stopped);
}

// A restart's progress never goes backwards: its shut down and its bring up share the 0-100.
// The periodic audit drops events and finished operations past their retention; unfinished
// operations and recent events stay, and event sequence numbers go on growing.
TEST_F(EngineTest, TheAuditDropsHistoryPastItsRetention) {
  const auto old_event = store_->events().append("space.state", std::nullopt).seq;
  const auto finished = store_->operations().create(std::nullopt, "create").id;
  store_->operations().succeed(finished);
  const auto unfinished = store_->operations().create(std::nullopt, "start").id;
  clock_.advance(8LL * 24 * 3600 * 1000);  // past the events' 7 days, not the 30 days
  const auto recent_event = store_->events().append("space.state", std::nullopt).seq;
  engine_->audit();
  auto events = store_->events().events_since(0, 10);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].seq, recent_event);
  EXPECT_TRUE(store_->operations().get(finished)) << "30 days for operations";
  clock_.advance(23LL * 24 * 3600 * 1000);
  engine_->audit();
  EXPECT_FALSE(store_->operations().get(finished));
  EXPECT_TRUE(store_->operations().get(unfinished)) << "an unfinished operation always stays";
  EXPECT_GT(store_->events().append("space.state", std::nullopt).seq, recent_event);
  EXPECT_GT(recent_event, old_event);
}

TEST_F(EngineTest, ARestartsProgressOnlyGrows) {
  const auto tmpl = add_template(bridged_template());
  const auto s = space(create(tmpl, "again").space.id);
  const auto op = engine_->restart_space(s.id);
  engine_->wait_idle();
  std::vector<int> seen;
  for (const auto& e : store_->events().events_since(0, 10000))
    if (e.kind == "operation.progress" && e.payload["operation"] == op)
      seen.push_back(e.payload["progress"].get<int>());
  ASSERT_GE(seen.size(), 4u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end())) << ::testing::PrintToString(seen);
  EXPECT_LE(seen.front(), 30);
  EXPECT_EQ(seen.back(), 100);
}

// A start reports its steps in the order they run, at percents that only grow, and the
// operation's row ends where its events did.
TEST_F(EngineTest, AStartsProgressOnlyGrowsInTheOrderOfItsSteps) {
  const auto tmpl = add_template(bridged_template());
  const auto s = space(create(tmpl, "later", std::nullopt, false).space.id);
  const auto op = engine_->start_space(s.id);
  engine_->wait_idle();
  std::vector<int> seen;
  std::vector<std::string> steps;
  for (const auto& e : store_->events().events_since(0, 10000))
    if (e.kind == "operation.progress" && e.payload["operation"] == op) {
      seen.push_back(e.payload["progress"].get<int>());
      steps.push_back(e.payload["step"].get<std::string>());
    }
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end())) << ::testing::PrintToString(seen);
  const std::vector<std::string> order{
      "resolving image", "preparing disk", "writing cloud-init seed",
      "defining domain", "starting",       "running"};
  EXPECT_EQ(steps, order);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back(), 100);
  EXPECT_EQ(space(s.id).state, store::SpaceState::Running);
  const auto row = store_->operations().get(op);
  ASSERT_TRUE(row);
  EXPECT_EQ(row->progress, 100);
}

TEST_F(EngineTest, AManualSpaceThatStopsStaysStopped) {
  const auto tmpl = add_template(bridged_template() + "runStrategy: Manual\n");
  const auto s = space(create(tmpl, "dev").space.id);
  hypervisor_->destroy(s.domain_name);
  // The lifecycle event arrives asynchronously: wait for it (bounded), then check nothing
  // started the domain again.
  for (int i = 0; i < 100 && space(s.id).state != store::SpaceState::Stopped; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    engine_->wait_idle();
  }
  engine_->wait_idle();
  EXPECT_EQ(space(s.id).state, store::SpaceState::Stopped);
  EXPECT_EQ(hypervisor_->state(s.domain_name).state, libvirt::DomainState::Shutoff);
}

TEST_F(EngineTest, TheReconcilerMarksASpaceWhoseDomainVanished) {
  const auto tmpl = add_template(bridged_template() + "runStrategy: Manual\n");
  const auto s = space(create(tmpl, "dev").space.id);
  hypervisor_->destroy(s.domain_name);
  hypervisor_->undefine(s.domain_name);
  engine_->wait_idle();
  engine_->reconcile();
  engine_->wait_idle();
  EXPECT_EQ(space(s.id).state, store::SpaceState::Error);
  EXPECT_NE(space(s.id).error.find("vanished"), std::string::npos);
}

// QEMU paused the vCPU on an error (KVM's "emulation failure" shows as libvirt's unknown
// reason): the space says so, where a wait for its boot would wait for ever. A pause by a
// user or a snapshot is not an error.
TEST_F(EngineTest, AGuestThatQemuPausedOnAnErrorIsAnErrorOnTheSpace) {
  const auto tmpl = add_template(bridged_template() + "runStrategy: Manual\n");
  const auto s = space(create(tmpl, "stuck").space.id);
  ASSERT_EQ(s.state, store::SpaceState::Running);
  class Paused final : public ForwardingHypervisor {
   public:
    using ForwardingHypervisor::ForwardingHypervisor;
    std::optional<libvirt::DomainInfo> lookup(const std::string& name) override {
      auto info = ForwardingHypervisor::lookup(name);
      if (info) info->status = status;
      return info;
    }
    libvirt::DomainStatus status{libvirt::DomainState::Paused, 1 /* VIR_DOMAIN_PAUSED_USER */};
  };
  auto paused = std::make_unique<Paused>(*hypervisor_);
  auto& seam = *paused;
  wrapper_ = std::move(paused);
  start_engine(seam);
  engine_->reconcile();
  engine_->wait_idle();
  EXPECT_EQ(space(s.id).state, store::SpaceState::Running)
      << "paused by a user: " << space(s.id).error;

  seam.status.reason = 0;  // VIR_DOMAIN_PAUSED_UNKNOWN: what an internal error leaves
  engine_->reconcile();
  engine_->wait_idle();
  EXPECT_EQ(space(s.id).state, store::SpaceState::Error);
  EXPECT_NE(space(s.id).error.find("QEMU paused the guest (internal error)"), std::string::npos)
      << space(s.id).error;
  EXPECT_NE(space(s.id).error.find("/var/log/libvirt/qemu/"), std::string::npos)
      << space(s.id).error;

  seam.status.reason = 5;  // VIR_DOMAIN_PAUSED_IOERROR: a full disk, say
  engine_->reconcile();
  engine_->wait_idle();
  EXPECT_NE(space(s.id).error.find("QEMU paused the guest (I/O error)"), std::string::npos)
      << space(s.id).error;
}

// The server stopped during a create or start that was not to leave the space running: at the
// next start-up, libvirt's word settles the state instead of leaving it "creating".
TEST_F(EngineTest, AnInterruptedOperationThatWasNotToRunSettlesOnWhatLibvirtSays) {
  const auto tmpl = add_template(bridged_template() + "runStrategy: Manual\n");
  const auto off = space(create(tmpl, "off").space.id);
  engine_->stop_space(off.id);  // defined, and off
  engine_->wait_idle();
  ASSERT_EQ(space(off.id).state, store::SpaceState::Stopped);
  const auto never = space(create(tmpl, "never", {}, false).space.id);  // nothing defined yet
  const auto on = space(create(tmpl, "on").space.id);
  ASSERT_EQ(on.state, store::SpaceState::Running);
  store_->spaces().set_state(off.id, store::SpaceState::Starting);
  store_->spaces().set_state(never.id, store::SpaceState::Creating);
  store_->spaces().set_state(on.id, store::SpaceState::Starting);
  store_->spaces().set_desired_state(on.id, store::DesiredState::Stopped);
  engine_->reconcile();
  engine_->wait_idle();
  EXPECT_EQ(space(off.id).state, store::SpaceState::Stopped);
  EXPECT_EQ(space(never.id).state, store::SpaceState::Stopped);
  EXPECT_EQ(space(on.id).state, store::SpaceState::Running) << "libvirt's state wins";
  EXPECT_EQ(hypervisor_->state(off.domain_name).state, libvirt::DomainState::Shutoff);
  EXPECT_TRUE(store_->operations().list_unfinished().empty());
}

// Operations a killed server left behind end when their work does, under their own ids: a
// client waiting on one (space create --wait) sees it finish; none stays running for ever.
TEST_F(EngineTest, EveryOperationCutShortByARestartEnds) {
  const auto tmpl = add_template(bridged_template() + "runStrategy: Manual\n");
  // A create cut short while it was starting the domain.
  const auto made = space(create(tmpl, "made").space.id);
  store_->spaces().set_state(made.id, store::SpaceState::Creating);
  const auto create_op = store_->operations().create(made.id, "create").id;
  store_->operations().progress(create_op, "defining domain", 90);
  // A stop that was queued and never ran: the space still runs, the user wants it stopped.
  const auto queued = space(create(tmpl, "queued").space.id);
  store_->spaces().set_desired_state(queued.id, store::DesiredState::Stopped);
  const auto stop_op = store_->operations().create(queued.id, "stop").id;
  // A restart whose effect nobody can confirm, and an older start queued before it.
  const auto both = space(create(tmpl, "both").space.id);
  const auto older = store_->operations().create(both.id, "start").id;
  const auto restart_op = store_->operations().create(both.id, "restart").id;
  // An operation of a space that no longer exists.
  const auto orphan_op = store_->operations().create(std::string("gone-space"), "delete").id;

  start_engine(*hypervisor_);
  engine_->wait_idle();
  auto op = [&](std::int64_t id) { return *store_->operations().get(id); };
  EXPECT_EQ(op(create_op).state, store::OperationState::Succeeded) << op(create_op).error;
  EXPECT_EQ(space(made.id).state, store::SpaceState::Running);
  EXPECT_EQ(op(stop_op).state, store::OperationState::Succeeded) << op(stop_op).error;
  EXPECT_EQ(space(queued.id).state, store::SpaceState::Stopped);
  EXPECT_EQ(hypervisor_->state(queued.domain_name).state, libvirt::DomainState::Shutoff);
  EXPECT_EQ(op(restart_op).state, store::OperationState::Failed);
  EXPECT_NE(op(restart_op)
                .error.find("interrupted: the server stopped before it finished; the "
                            "space is running"),
            std::string::npos)
      << op(restart_op).error;
  EXPECT_EQ(op(older).state, store::OperationState::Failed);
  EXPECT_NE(op(older).error.find("interrupted: "), std::string::npos) << op(older).error;
  EXPECT_EQ(op(orphan_op).state, store::OperationState::Failed);
  EXPECT_TRUE(store_->operations().list_unfinished().empty());
}

// A server killed while libvirtd was starting a domain: at the next start-up, the engine's
// state check can still see the domain off, and its own start is refused as "already
// running". That is the state the operation wanted, not a failure (e2e.server_races hit it).
TEST_F(EngineTest, AStartThatLibvirtIsAlreadyFinishingIsNotAFailure) {
  const auto tmpl = add_template(bridged_template() + "runStrategy: Manual\n");
  const auto s = space(create(tmpl, "racing").space.id);
  ASSERT_EQ(s.state, store::SpaceState::Running);
  class StillStarting final : public ForwardingHypervisor {
   public:
    using ForwardingHypervisor::ForwardingHypervisor;
    libvirt::DomainStatus state(const std::string& name) override {
      auto status = ForwardingHypervisor::state(name);
      if (!asked_to_start) status.state = libvirt::DomainState::Shutoff;
      return status;
    }
    void start(const std::string& name, libvirt::StartOptions options) override {
      asked_to_start = true;
      ForwardingHypervisor::start(name, options);  // refused: it is running
    }
    std::atomic<bool> asked_to_start{false};
  };
  auto racing = std::make_unique<StillStarting>(*hypervisor_);
  auto& seam = *racing;
  wrapper_ = std::move(racing);
  store_->spaces().set_state(s.id, store::SpaceState::Starting);  // cut short by the kill
  start_engine(seam);
  engine_->wait_idle();
  EXPECT_TRUE(seam.asked_to_start);
  EXPECT_EQ(space(s.id).state, store::SpaceState::Running) << space(s.id).error;
  EXPECT_EQ(hypervisor_->state(s.domain_name).state, libvirt::DomainState::Running);
}

// A guest that ignores the ACPI shutdown is forced off once the stop timeout has passed on the
// engine's timer (moved on here: the test waits for nothing).
TEST_F(EngineTest, AGuestThatIgnoresTheShutdownIsForcedOffAfterTheStopTimeout) {
  const auto tmpl = add_template(bridged_template() + "runStrategy: Manual\n");
  const auto s = space(create(tmpl, "deaf").space.id);
  ASSERT_EQ(s.state, store::SpaceState::Running) << s.error;
  class Deaf final : public ForwardingHypervisor {
   public:
    using ForwardingHypervisor::ForwardingHypervisor;
    void shutdown(const std::string&) override { asked = true; }
    std::atomic<bool> asked{false};
  };
  auto deaf = std::make_unique<Deaf>(*hypervisor_);
  auto& seam = *deaf;
  wrapper_ = std::move(deaf);
  start_engine(seam);
  engine_->wait_idle();
  const auto op = engine_->stop_space(s.id);
  for (int i = 0; i < 400 && !seam.asked; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(seam.asked);
  timer_.advance(std::chrono::seconds(4));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(hypervisor_->state(s.domain_name).state, libvirt::DomainState::Running)
      << "forced off before the stop timeout";
  timer_.advance(std::chrono::seconds(1));
  engine_->wait_idle();
  EXPECT_EQ(hypervisor_->state(s.domain_name).state, libvirt::DomainState::Shutoff);
  EXPECT_EQ(space(s.id).state, store::SpaceState::Stopped);
  EXPECT_EQ(store_->operations().get(op)->state, store::OperationState::Succeeded);
  bool forced = false;
  for (const auto& e : store_->events().events_since(0, 10000))
    forced = forced || (e.space_id == s.id && e.kind == "operation.progress" &&
                        e.payload["step"] == "forcing off after the stop timeout");
  EXPECT_TRUE(forced);
}

TEST_F(EngineTest, ParallelCreatesNeverShareAnAddress) {
  const auto tmpl = add_template(bridged_template());  // .11-.14 usable: 4 addresses
  std::atomic<int> ok{0}, exhausted{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 12; ++i)
    threads.emplace_back([&, i] {
      try {
        engine_->create_space({alice_, tmpl, "p" + std::to_string(i), std::nullopt, false});
        ++ok;
      } catch (const EngineError& e) {
        if (std::string(e.what()).find("exhausted") != std::string::npos) ++exhausted;
      }
    });
  for (auto& t : threads) t.join();
  engine_->wait_idle();
  EXPECT_EQ(ok, 4);
  EXPECT_EQ(exhausted, 8);
  std::set<std::string> addresses;
  for (const auto& s : store_->spaces().list()) addresses.insert(*s.ip);
  EXPECT_EQ(addresses.size(), 4u);
}

// A node whose devices libvirt's test driver describes: a GPU and its audio function in IOMMU
// group 1, a NIC without an IOMMU group, two USB devices.
class DeviceEngineTest : public EngineTest {
 protected:
  DeviceEngineTest()
      : EngineTest("test://" + std::string(BOWLINE_SOURCE_DIR) + "/tests/data/libvirt/node.xml") {}
};

TEST_F(DeviceEngineTest, ADeviceGoesToOneRunningSpaceAtATime) {
  const auto tmpl = add_template(bridged_template() + "devices: [pci_0000_01_00_0, usb_001_002]\n");
  const auto first = create(tmpl, "first");
  EXPECT_EQ(space(first.space.id).state, store::SpaceState::Running) << space(first.space.id).error;
  try {
    create(tmpl, "second");
    FAIL() << "two running spaces got one device";
  } catch (const EngineError& e) {
    EXPECT_NE(std::string(e.what()).find("held by the running space first"), std::string::npos)
        << e.what();
  }
  // Made but stopped, it may start once the holder stops.
  const auto second = create(tmpl, "second", std::nullopt, false).space.id;
  engine_->start_space(second);
  engine_->wait_idle();
  EXPECT_EQ(space(second).state, store::SpaceState::Error);
  EXPECT_NE(space(second).error.find("held by the running space first"), std::string::npos);
  engine_->stop_space(first.space.id);
  engine_->wait_idle();
  engine_->start_space(second);
  engine_->wait_idle();
  EXPECT_EQ(space(second).state, store::SpaceState::Running) << space(second).error;
}

// Dedicated CPU placement: each start takes free CPUs of server.kvm.dedicated_cpus (the vCPUs'
// then the isolated emulator's), what other active spaces' domains hold excluded; too few free
// is a clear refusal, and a stopped space's CPUs are free again.
TEST_F(DeviceEngineTest, DedicatedCpusArePinnedFromTheSetAside) {
  dedicated_cpus_ = {2, 3, 4, 5, 6};
  start_engine(*hypervisor_);
  const auto tmpl = add_template(
      "image: tiny\ninstanceType: cx1.large\n"
      "network: {mode: nat, bridge: default}\n");
  const auto first = space(create(tmpl, "one").space.id);
  ASSERT_EQ(first.state, store::SpaceState::Running) << first.error;
  auto xml = hypervisor_->domain_xml(first.domain_name, true);
  EXPECT_NE(xml.find("<vcpupin vcpu='0' cpuset='2'/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<vcpupin vcpu='1' cpuset='3'/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<emulatorpin cpuset='4'/>"), std::string::npos) << xml;
  EXPECT_EQ(xml.find("are not pinned"), std::string::npos) << "the note is gone once pinned";

  const auto second = space(create(tmpl, "two").space.id);
  EXPECT_EQ(second.state, store::SpaceState::Error);
  EXPECT_NE(second.error.find("needs 3 dedicated CPUs; 2 of the 5 in server.kvm.dedicated_cpus "
                              "are free"),
            std::string::npos)
      << second.error;
  // Operations on different spaces run side by side: the CPUs are free once the stop is done.
  engine_->stop_space(first.id);
  engine_->wait_idle();
  engine_->start_space(second.id);
  engine_->wait_idle();
  EXPECT_EQ(space(second.id).state, store::SpaceState::Running) << space(second.id).error;
  xml = hypervisor_->domain_xml(second.domain_name, true);
  EXPECT_NE(xml.find("<vcpupin vcpu='0' cpuset='2'/>"), std::string::npos) << xml;
}

// A GPU named by its device-plugin resource goes to a free matching host device at start.
TEST_F(DeviceEngineTest, AResourceNamedGpuGetsAFreeMatchingDevice) {
  const auto tmpl = add_template(
      "image: tiny\nmemory: 256M\ngpus: [{name: nvidia.com/GA102GL_A10}]\n"
      "network: {mode: nat, bridge: default}\n");
  const auto first = space(create(tmpl, "one").space.id);
  ASSERT_EQ(first.state, store::SpaceState::Running) << first.error;
  const auto xml = hypervisor_->domain_xml(first.domain_name, true);
  EXPECT_NE(xml.find("<address domain='0x0000' bus='0x01' slot='0x00' function='0x0'/>"),
            std::string::npos)
      << xml;
  const auto second = space(create(tmpl, "two").space.id);
  EXPECT_EQ(second.state, store::SpaceState::Error);
  EXPECT_NE(second.error.find("no free host device for gpu nvidia.com/GA102GL_A10"),
            std::string::npos)
      << second.error;
}

TEST_F(DeviceEngineTest, AMissingOrUnpassableDeviceIsRefusedBeforeAnythingIsMade) {
  for (const auto& [device, why] :
       std::vector<std::pair<std::string, std::string>>{{"pci_0000_09_00_0", "is not on this node"},
                                                        {"pci_0000_02_00_0", "no IOMMU group"},
                                                        {"usb_004_009", "is not on this node"}}) {
    const auto tmpl = add_template(bridged_template() + "devices: [" + device + "]\n");
    try {
      create(tmpl, "dev");
      FAIL() << device << " was accepted";
    } catch (const EngineError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(store_->spaces().list().empty());
}

// ---- pools -----------------------------------------------------------------------------

std::string nat_template() {
  return "image: tiny\nmemory: 256M\nnetwork:\n  mode: nat\n  bridge: default\n";
}

TEST_F(EngineTest, APoolRefusesABridgedTemplateAndSaysWhy) {
  const auto tmpl = add_template(bridged_template());
  try {
    engine_->create_pool("p" + suffix_, tmpl, 2);
    FAIL() << "a bridged pool was accepted";
  } catch (const EngineError& e) {
    EXPECT_EQ(e.kind(), EngineError::Kind::Invalid);
    EXPECT_NE(std::string(e.what()).find("bridged"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("nat"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(store_->pools().list().empty());
  EXPECT_TRUE(store_->spaces().list().empty());
}

TEST_F(EngineTest, APoolKeepsItsMembersReadyAndRefillsAfterAClaim) {
  const auto tmpl = add_template(nat_template());
  const auto pool = engine_->create_pool("p" + suffix_, tmpl, 2);
  engine_->wait_idle();
  auto members = store_->spaces().list_for_pool(pool.id);
  ASSERT_EQ(members.size(), 2u);
  for (const auto& m : members) {
    EXPECT_EQ(m.state, store::SpaceState::Running) << m.error;
    EXPECT_FALSE(m.owner_id.has_value());
    EXPECT_EQ(hypervisor_->state(m.domain_name).state, libvirt::DomainState::Running);
  }

  // The test driver has no guest agent: the member restarts into alice's seed.
  const auto claimed = engine_->claim(pool.name, alice_, "mine");
  EXPECT_EQ(claimed.method, ClaimMethod::Reboot);
  EXPECT_FALSE(claimed.agent_problem.empty());
  ASSERT_TRUE(claimed.operation.has_value());
  engine_->wait_idle();
  const auto owned = space(claimed.space.id);
  EXPECT_EQ(owned.owner_id, alice_);
  EXPECT_EQ(owned.name, "mine");
  EXPECT_FALSE(owned.pool_id.has_value());
  EXPECT_EQ(owned.state, store::SpaceState::Running) << owned.error;
  EXPECT_EQ(store_->operations().get(*claimed.operation)->state, store::OperationState::Succeeded)
      << store_->operations().get(*claimed.operation)->error;

  // The pool made a new member in the claimed one's place.
  members = store_->spaces().list_for_pool(pool.id);
  ASSERT_EQ(members.size(), 2u);
  for (const auto& m : members) EXPECT_NE(m.id, owned.id);

  // A taken name is refused and the member stays in the pool.
  EXPECT_THROW(engine_->claim(pool.name, alice_, "mine"), EngineError);
  EXPECT_EQ(store_->spaces().list_for_pool(pool.id).size(), 2u);

  // Deleting the pool deletes its unclaimed members, not alice's space.
  engine_->delete_pool(pool.name);
  engine_->wait_idle();
  EXPECT_FALSE(store_->pools().find_by_name(pool.name).has_value());
  for (const auto& m : members) {
    EXPECT_FALSE(store_->spaces().get(m.id).has_value());
    EXPECT_FALSE(hypervisor_->lookup(m.domain_name).has_value());
  }
  EXPECT_TRUE(store_->spaces().get(owned.id).has_value());
}

TEST_F(EngineTest, APoolWhoseMemberFailsSaysSoAndStopsMakingMore) {
  const auto tmpl = add_template(
      "image: no-such-image\nmemory: 256M\nnetwork:\n  mode: nat\n  bridge: default\n");
  const auto pool = engine_->create_pool("p" + suffix_, tmpl, 1);
  engine_->wait_idle();
  engine_->replenish(pool.id);  // a refill must not pile up failing members
  engine_->wait_idle();
  const auto members = store_->spaces().list_for_pool(pool.id);
  ASSERT_EQ(members.size(), 1u);
  EXPECT_EQ(members[0].state, store::SpaceState::Error);
  EXPECT_NE(members[0].error.find("no-such-image"), std::string::npos) << members[0].error;
  try {
    engine_->claim(pool.name, alice_, "mine");
    FAIL() << "a failed member was handed out";
  } catch (const EngineError& e) {
    EXPECT_EQ(e.kind(), EngineError::Kind::Conflict);
    EXPECT_NE(std::string(e.what()).find("no member ready"), std::string::npos) << e.what();
  }
  bool reported = false;
  for (const auto& e : store_->events().events_since(0, 10000))
    reported = reported || e.kind == "pool.error";
  EXPECT_TRUE(reported);
}

TEST_F(EngineTest, AHaltedSpaceIsMadeButNotStarted) {
  const auto tmpl = add_template(bridged_template() + "runStrategy: Halted\n");
  const auto s = space(create(tmpl, "dev").space.id);
  EXPECT_EQ(s.state, store::SpaceState::Stopped);
  EXPECT_EQ(s.desired_state, store::DesiredState::Stopped);
}

// The list of spaces shows NAT addresses from one pass over the node's DHCP leases, matched by
// each space's MAC: no question per domain, a renewed lease's newest address, no IPv6, no
// bridged space (its address is bowline's); kept for a second, the same map while it holds.
TEST_F(EngineTest, LearnedAddressesComeFromOnePassOverTheLeases) {
  const auto nat = add_template(nat_template());
  const auto a = space(create(nat, "a").space.id);
  const auto b = space(create(nat, "b").space.id);
  const auto c = space(create(nat, "c").space.id);
  const auto stopped = space(create(nat, "off", std::nullopt, false).space.id);
  const auto bridged = space(create(add_template(bridged_template()), "br").space.id);
  ASSERT_EQ(a.state, store::SpaceState::Running) << a.error;
  ASSERT_EQ(bridged.state, store::SpaceState::Running) << bridged.error;
  class Leases final : public ForwardingHypervisor {
   public:
    using ForwardingHypervisor::ForwardingHypervisor;
    std::vector<libvirt::DhcpLease> dhcp_leases() override {
      ++passes;
      return leases;
    }
    std::vector<libvirt::InterfaceAddress> interface_addresses(
        const std::string& name, libvirt::AddressSource source) override {
      ++per_domain;
      return ForwardingHypervisor::interface_addresses(name, source);
    }
    std::vector<libvirt::DhcpLease> leases;
    std::atomic<int> passes{0}, per_domain{0};
  };
  auto wrapped = std::make_unique<Leases>(*hypervisor_);
  auto& seam = *wrapped;
  wrapper_ = std::move(wrapped);
  const auto mac = [](const store::Space& s) { return plan::mac_for(s.id, 0); };
  auto upper = mac(a);
  for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  // Leases run out after `now` (libvirt lists no lease that ran out).
  const std::int64_t now = std::time(nullptr) + 3600;
  seam.leases = {{"default", upper, "198.51.100.7", false, now + 100},
                 {"default", mac(b), "198.51.100.9", false, now + 200},
                 {"default", mac(b), "198.51.100.8", false, now + 100},  // the older lease
                 {"default", mac(c), "fd00::5", true, now + 300},
                 {"default", mac(stopped), "198.51.100.20", false, now + 100},
                 {"default", mac(bridged), "198.51.100.21", false, now + 100}};
  start_engine(seam);
  engine_->wait_idle();
  seam.per_domain = 0;
  const auto first = engine_->learned_addresses();
  EXPECT_EQ(*first, (Engine::AddressMap{{a.id, "198.51.100.7"}, {b.id, "198.51.100.9"}}));
  EXPECT_EQ(seam.passes, 1);
  EXPECT_EQ(seam.per_domain, 0) << "asked domain by domain";
  EXPECT_EQ(engine_->learned_addresses(), first);  // within the second: no new pass
  EXPECT_EQ(seam.passes, 1);
  timer_.advance(std::chrono::seconds(2));
  EXPECT_EQ(engine_->learned_addresses(), first) << "the same addresses make a new map";
  EXPECT_EQ(seam.passes, 2);
  seam.leases.push_back({"default", mac(c), "198.51.100.10", false, now + 300});
  // A lease of its MAC in another network is not its address.
  seam.leases.push_back({"elsewhere", mac(a), "198.51.100.30", false, now + 900});
  timer_.advance(std::chrono::seconds(2));
  const auto second = engine_->learned_addresses();
  EXPECT_NE(second, first);
  EXPECT_EQ(second->at(c.id), "198.51.100.10");
  EXPECT_EQ(second->at(a.id), "198.51.100.7");
}

// A node whose driver lists no leases (libvirt's test driver) lists the address its space
// info shows: the NIC's lease as libvirt reports it for the domain.
TEST_F(EngineTest, LearnedAddressesAreSpaceInfosWhereTheDriverListsNoLeases) {
  const auto s = space(create(add_template(nat_template()), "a").space.id);
  ASSERT_EQ(s.state, store::SpaceState::Running) << s.error;
  const auto info = engine_->describe(s.id).address;
  ASSERT_TRUE(info);
  const auto listed = engine_->learned_addresses();
  ASSERT_EQ(listed->count(s.id), 1u);
  EXPECT_EQ(listed->at(s.id), *info);
}

}  // namespace
}  // namespace bowline::engine
