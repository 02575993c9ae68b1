// The libvirt node and bowline's traffic filter (engine/traffic_filter.hpp), on libvirt's test
// driver behind a seam that answers the network-filter calls the test driver lacks and records
// them: the filter is made sure of before each domain is defined, every NIC references it with
// its own address or DHCP learning (believing the network's own DHCP server), and a host whose
// libvirt cannot filter starts no space at all. The test driver itself (no filters, no guests)
// is let through.
#include "engine/traffic_filter.hpp"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <pugixml.hpp>

#include "engine/engine.hpp"
#include "engine/libvirt_node.hpp"
#include "forwarding_hypervisor.hpp"
#include "libvirt/libvirt_hypervisor.hpp"
#include "libvirt/nwfilter.hpp"
#include "util/clock.hpp"
#include "util/process.hpp"

namespace bowline::engine {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class Bridges final : public HostProbe {
 public:
  bool bridge_exists(const std::string& name) const override { return name == "testbr0"; }
  std::vector<std::string> bridge_ports(const std::string&) const override { return {"eth0"}; }
};

// The test driver with network filters: `filters` (name -> XML) is what libvirt holds; `calls`
// what was asked, in order ("ensure NAME", "define DOMAIN"). Without `filters_work` the filter
// calls fail as the test driver's do; `uri` pretends to be another libvirt.
class FilteringHost final : public ForwardingHypervisor {
 public:
  using ForwardingHypervisor::ForwardingHypervisor;
  std::string uri() const override {
    return fake_uri.empty() ? ForwardingHypervisor::uri() : fake_uri;
  }
  std::optional<std::string> nwfilter_xml(const std::string& name) override {
    if (!filters_work) return Hypervisor::nwfilter_xml(name);  // throws: not supported
    std::lock_guard lock(mutex);
    const auto it = filters.find(name);
    return it == filters.end() ? std::nullopt : std::optional(it->second);
  }
  bool ensure_nwfilter(const std::string& name, const std::string& xml) override {
    if (!filters_work) return Hypervisor::ensure_nwfilter(name, xml);
    std::lock_guard lock(mutex);
    calls.push_back("ensure " + name);
    const bool changed = filters[name] != xml;
    filters[name] = xml;
    return changed;
  }
  libvirt::DomainInfo define(const std::string& xml) override {
    auto info = ForwardingHypervisor::define(xml);
    std::lock_guard lock(mutex);
    calls.push_back("define " + info.name);
    defined[info.name] = xml;
    return info;
  }

  std::string fake_uri;
  bool filters_work = true;
  std::mutex mutex;
  std::map<std::string, std::string> filters;
  std::vector<std::string> calls;
  std::map<std::string, std::string> defined;
};

// nft as a script recorder that can be told to refuse (the real nft: guest_guard_rules_test and
// e2e.security_guest_spoofing).
class RecordingNft final : public util::ProcessRunner {
 public:
  util::ProcessResult run(const std::vector<std::string>& argv,
                          std::chrono::milliseconds) override {
    std::lock_guard lock(mutex);
    ++calls;
    if (refuse || argv.empty())
      return {1, "", "Error: Could not process rule: Operation not permitted", false};
    return {0, "", "", false};
  }
  std::mutex mutex;
  int calls = 0;
  bool refuse = false;
};

class TrafficFilterTest : public ::testing::Test {
 protected:
  explicit TrafficFilterTest(bool guarded = false) {
    char pattern[] = "/tmp/bowline-traffic-filter.XXXXXX";
    root_ = mkdtemp(pattern);
    fs::create_directories(root_ / "cloud-images");
    fs::create_directories(root_ / "base");
    fs::create_directories(root_ / "spaces");
    const auto base = root_ / "cloud-images" / "tiny.qcow2";
    EXPECT_EQ(std::system(("qemu-img create -q -f qcow2 " + base.string() + " 16M").c_str()), 0);
    store_ = std::make_unique<store::Store>(root_ / "bowline.db", clock_);
    cache_ = std::make_unique<image::ImageCache>(
        image::CacheOptions{root_ / "cloud-images", root_ / "base", {}, {}});
    disks_ = std::make_unique<image::Disks>(runner_);
    bus_ = std::make_unique<EventBus>(*store_);
    LibvirtNodeSettings settings;
    settings.node.domain_type = plan::DomainType::Qemu;
    settings.node.images_path = (root_ / "spaces").string();
    settings.stop_timeout = std::chrono::seconds(5);
    if (guarded) {
      GuestGuardOptions options;
      options.dir = root_;
      options.lease_dir = root_ / "no-leases";
      guard_ = std::make_unique<GuestGuard>(
          nft_, clock_, [] { return std::vector<libvirt::DhcpLease>{}; }, options);
      guard_->load({});
      settings.guard = guard_.get();
    }
    node_ = std::make_unique<LibvirtNode>(host_, *cache_, *disks_, bridges_, settings);
    engine_ = std::make_unique<Engine>(*store_, *bus_, EngineSettings{});
    engine_->add_node(*node_);
    engine_->start();
    alice_ = store_->users()
                 .create({"alice", "alice@example.org", "", std::string("pw"), "", {}, {}})
                 .id;
    // test:///default is one per process: names of their own.
    static int counter = 0;
    suffix_ = std::to_string(getpid()) + "-" + std::to_string(counter++);
    store_->templates().create(
        "bridged", "name: ${{ .space.name }}-" + suffix_ +
                       "\nimage: tiny\nmemory: 256M\nnetwork:\n  bridge: testbr0\n"
                       "  cidr: 198.51.100.0/24\n  gateway: 198.51.100.1\n"
                       "  ip_range_start: 198.51.100.10\n  ip_range_end: 198.51.100.20\n");
    // The test driver's default network has 192.168.122.1 with DHCP.
    store_->templates().create("nat", "name: ${{ .space.name }}-" + suffix_ +
                                          "\nimage: tiny\nmemory: 256M\nnetwork: {mode: nat, "
                                          "bridge: default}\nnetworks: [{name: default}]\n");
  }
  ~TrafficFilterTest() override {
    engine_->wait_idle();
    for (const auto& space : store_->spaces().list()) {
      try {
        real_.destroy(space.domain_name);
      } catch (...) {
      }
      try {
        real_.undefine(space.domain_name);
      } catch (...) {
      }
    }
    engine_.reset();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  store::Space create(const std::string& tmpl, const std::string& name) {
    const auto accepted = engine_->create_space({alice_, tmpl, name, std::nullopt, true});
    engine_->wait_idle();
    return *store_->spaces().get(accepted.space.id);
  }

  // NAME=VALUE of each filterref parameter of the domain's NIC number `index`.
  std::vector<std::string> filter_of(const std::string& domain, std::size_t index,
                                     std::string* filter = nullptr) {
    pugi::xml_document doc;
    EXPECT_TRUE(doc.load_string(host_.defined[domain].c_str()));
    const auto nics = doc.select_nodes("//devices/interface");
    EXPECT_LT(index, nics.size());
    std::vector<std::string> out;
    if (index >= nics.size()) return out;
    const auto ref = nics[index].node().child("filterref");
    if (filter) *filter = ref.attribute("filter").value();
    for (const auto p : ref.children("parameter"))
      out.push_back(std::string(p.attribute("name").value()) + "=" + p.attribute("value").value());
    return out;
  }

  util::ManualClock clock_;
  util::SystemProcessRunner runner_;
  RecordingNft nft_;
  std::unique_ptr<GuestGuard> guard_;
  Bridges bridges_;
  fs::path root_;
  libvirt::LibvirtHypervisor real_{libvirt::LibvirtOptions{"test:///default"}};
  FilteringHost host_{real_};
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<image::ImageCache> cache_;
  std::unique_ptr<image::Disks> disks_;
  std::unique_ptr<EventBus> bus_;
  std::unique_ptr<LibvirtNode> node_;
  std::unique_ptr<Engine> engine_;
  std::int64_t alice_ = 0;
  std::string suffix_;
};

// The hostile-guest rules: `ctest -L security` runs these.
using security_traffic_filter_node = TrafficFilterTest;

TEST_F(security_traffic_filter_node, TheFilterIsMadeSureOfBeforeTheDomainIsDefined) {
  const auto s = create("bridged", "b");
  ASSERT_EQ(s.state, store::SpaceState::Running) << s.error;
  EXPECT_THAT(host_.calls, ElementsAre("ensure bowline-clean-traffic", "define " + s.domain_name));
  EXPECT_EQ(host_.filters["bowline-clean-traffic"], libvirt::traffic_filter_xml());
  std::string filter;
  EXPECT_THAT(filter_of(s.domain_name, 0, &filter), ElementsAre("IP=" + *s.ip));
  EXPECT_EQ(filter, "bowline-clean-traffic");
}

TEST_F(security_traffic_filter_node, NicsOnLibvirtNetworksLearnTheirLeaseFromTheNetworksServer) {
  const auto s = create("nat", "n");
  ASSERT_EQ(s.state, store::SpaceState::Running) << s.error;
  for (std::size_t nic : {0u, 1u}) {  // the space's network and the extra NIC
    std::string filter;
    EXPECT_THAT(filter_of(s.domain_name, nic, &filter),
                ElementsAre("CTRL_IP_LEARNING=dhcp", "DHCPSERVER=192.168.122.1"))
        << "NIC " << nic;
    EXPECT_EQ(filter, "bowline-clean-traffic") << "NIC " << nic;
  }
}

TEST_F(security_traffic_filter_node, AHostWhoseLibvirtCannotFilterStartsNoSpace) {
  host_.fake_uri = "qemu:///system";
  host_.filters_work = false;
  const auto s = create("bridged", "b");
  EXPECT_EQ(s.state, store::SpaceState::Error);
  EXPECT_THAT(s.error, HasSubstr("network filter \"bowline-clean-traffic\""));
  EXPECT_THAT(s.error, HasSubstr("guests do not start unfiltered"));
  EXPECT_THAT(s.error, HasSubstr("nwfilter driver"));
  EXPECT_TRUE(host_.defined.empty()) << "a domain was defined without its filter";
  EXPECT_FALSE(real_.lookup(s.domain_name));
}

TEST_F(TrafficFilterTest, TheTestDriverWhichRunsNoGuestsNeedsNoFilter) {
  host_.filters_work = false;  // the test driver as it is
  const auto s = create("bridged", "b");
  EXPECT_EQ(s.state, store::SpaceState::Running) << s.error;
  EXPECT_THAT(filter_of(s.domain_name, 0), ElementsAre("IP=" + *s.ip));
}

// On this host's libvirt the guard filters instead: the NICs are in it before the domain is
// defined, the domain has fixed device names and no filterref, and a delete takes them out.
class security_guest_guard_node : public TrafficFilterTest {
 protected:
  security_guest_guard_node() : TrafficFilterTest(true) {}
};

TEST_F(security_guest_guard_node, TheGuardHasTheNicsBeforeTheDomainIsDefined) {
  const auto s = create("nat", "n");
  ASSERT_EQ(s.state, store::SpaceState::Running) << s.error;
  EXPECT_THAT(host_.calls, ElementsAre("define " + s.domain_name)) << "libvirt's filter was used";
  const auto guarded = guard_->domains();
  ASSERT_EQ(guarded.count(s.domain_name), 1u);
  const auto& nics = guarded.at(s.domain_name);
  ASSERT_EQ(nics.size(), 2u);
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(host_.defined[s.domain_name].c_str()));
  const auto interfaces = doc.select_nodes("//devices/interface");
  ASSERT_EQ(interfaces.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto nic = interfaces[i].node();
    EXPECT_EQ(nics[i].tap, nic.child("target").attribute("dev").value()) << "NIC " << i;
    EXPECT_EQ(nics[i].tap, plan::tap_name("000", s.domain_name, i));
    EXPECT_EQ(nics[i].mac, nic.child("mac").attribute("address").value());
    EXPECT_EQ(nics[i].network, "default");
    EXPECT_FALSE(nics[i].ip);  // learnt from the network's DHCP
    EXPECT_FALSE(nic.child("filterref")) << "NIC " << i;
  }
  engine_->delete_space(s.id);
  engine_->wait_idle();
  EXPECT_EQ(guard_->domains().count(s.domain_name), 0u);
}

TEST_F(security_guest_guard_node, ABridgedNicMaySendFromItsOwnAddress) {
  const auto s = create("bridged", "b");
  ASSERT_EQ(s.state, store::SpaceState::Running) << s.error;
  const auto nics = guard_->domains().at(s.domain_name);
  ASSERT_EQ(nics.size(), 1u);
  ASSERT_TRUE(nics[0].ip);
  EXPECT_EQ(nics[0].ip->to_string(), *s.ip);
  EXPECT_EQ(nics[0].network, "");
}

TEST_F(security_guest_guard_node, AGuardThatCannotWriteItsRulesStartsNoSpace) {
  {
    std::lock_guard lock(nft_.mutex);
    nft_.refuse = true;
  }
  const auto s = create("bridged", "b");
  EXPECT_EQ(s.state, store::SpaceState::Error);
  EXPECT_THAT(s.error, HasSubstr("nft: cannot"));
  EXPECT_THAT(s.error, HasSubstr("Operation not permitted"));
  EXPECT_TRUE(host_.defined.empty()) << "a domain was defined without its rules";
  EXPECT_FALSE(real_.lookup(s.domain_name));
  EXPECT_EQ(guard_->domains().count(s.domain_name), 0u);
}

TEST(TrafficFilterUris, OnlyTheTestDriverIsTheTestDriver) {
  EXPECT_TRUE(is_test_driver("test:///default"));
  EXPECT_TRUE(is_test_driver("test:///tmp/node.xml"));
  EXPECT_TRUE(is_test_driver("test+unix:///default"));
  EXPECT_FALSE(is_test_driver("qemu:///system"));
  EXPECT_FALSE(is_test_driver("qemu+ssh://root@host/system"));
  EXPECT_FALSE(is_test_driver("qemu:///system?test://"));
  EXPECT_TRUE(is_local("qemu:///system"));
  EXPECT_TRUE(is_local("qemu+unix:///system"));
  EXPECT_FALSE(is_local("qemu+ssh://root@host/system"));
  EXPECT_FALSE(is_local("qemu+tls://host/system"));
}

// knot runs as an ordinary user in the libvirt group: `auto` then leaves filtering to libvirt's
// nwfilter (libvirtd applies it as root) and says why; an explicit guard stays the guard (the
// server refuses to start without the capability).
TEST(GuestFilterChoice, AutoFallsBackToNwfilterWithoutTheCapabilityAndSaysWhy) {
  const std::string local = "qemu:///system";
  EXPECT_TRUE(guarded_by_bowline(local, "auto", true));
  EXPECT_TRUE(nwfilter_fallback_reason(local, "auto", true).empty());
  EXPECT_FALSE(guarded_by_bowline(local, "auto", false));
  EXPECT_NE(nwfilter_fallback_reason(local, "auto", false).find("without CAP_NET_ADMIN"),
            std::string::npos);
  EXPECT_TRUE(guarded_by_bowline(local, "guard", false));
  EXPECT_FALSE(guarded_by_bowline(local, "nwfilter", true));
  EXPECT_TRUE(nwfilter_fallback_reason(local, "nwfilter", false).empty())
      << "asked for, not fallen back to";
  EXPECT_FALSE(guarded_by_bowline("qemu+ssh://root@host/system", "auto", true));
  EXPECT_TRUE(nwfilter_fallback_reason("qemu+ssh://root@host/system", "auto", false).empty());
  EXPECT_FALSE(guarded_by_bowline("test:///default", "auto", true));
  // These tests run as root.
  if (::geteuid() == 0) {
    EXPECT_TRUE(may_manage_nftables());
  }
}

}  // namespace
}  // namespace bowline::engine
