// Which address bowline connects to for a guest (engine/guest_address.hpp): the lease its own
// MAC holds in its own network, never the guest agent's word, never the host's own addresses,
// the network's gateway or an address no guest has; and IPAM and the DNAT rules refuse the
// same. The node runs on libvirt's test driver; the leases are what a test says.
#include "engine/guest_address.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <ctime>

#include "../common/scratch_files.hpp"
#include "engine/engine_error.hpp"
#include "engine/ipam.hpp"
#include "engine/libvirt_node.hpp"
#include "engine/port_forwards.hpp"
#include "forwarding_hypervisor.hpp"
#include "libvirt/libvirt_hypervisor.hpp"
#include "spec/loader.hpp"
#include "util/clock.hpp"
#include "util/process.hpp"

namespace bowline::engine {
namespace {

using ::testing::HasSubstr;

std::uint32_t ip(const char* text) {
  return spec::Ipv4Address::parse(text)->value;
}

TEST(security_guest_address, NeverTheHostTheGatewayOrNoGuestsAddress) {
  const AddressBarriers b{{ip("192.0.2.10"), ip("127.0.0.1")}, {ip("198.51.100.1")}};
  EXPECT_EQ(guest_address_refusal("198.51.100.7", b), std::nullopt);
  const std::pair<const char*, const char*> refused[] = {
      {"198.51.100.1", "the network's gateway"},
      {"192.0.2.10", "an address of this host"},
      {"127.0.0.1", "loopback"},
      {"127.1.2.3", "loopback"},
      {"0.0.0.0", "unspecified"},
      {"169.254.1.1", "link-local"},
      {"224.0.0.1", "multicast"},
      {"255.255.255.255", "broadcast"},
      {"fd00::1", "not an IPv4 address"},
  };
  for (const auto& [address, why] : refused) {
    const auto said = guest_address_refusal(address, b);
    ASSERT_TRUE(said) << address;
    EXPECT_THAT(*said, HasSubstr(why)) << address;
  }
}

TEST(security_guest_address, TheLeaseIsTheOwnMacsInTheOwnNetworkThatLastsLongest) {
  const std::string mac = "52:54:00:aa:bb:cc";
  const std::vector<libvirt::DhcpLease> leases{
      {"other", mac, "10.0.0.5", false, 900},                    // another network
      {"nat", "52:54:00:aa:bb:cd", "198.51.100.5", false, 900},  // another MAC
      {"nat", "52:54:00:AA:BB:CC", "198.51.100.6", false, 200},  // its own, in capitals
      {"nat", mac, "198.51.100.7", false, 300},                  // its own, lasts longest
      {"nat", mac, "198.51.100.8", false, 50},                   // run out at 100
      {"nat", mac, "fd00::7", true, 900},                        // IPv6
  };
  const auto lease = lease_of(leases, "nat", mac, 100);
  ASSERT_TRUE(lease);
  EXPECT_EQ(lease->address, "198.51.100.7");
  EXPECT_EQ(lease_of(leases, "nat", mac, 400), std::nullopt) << "every lease ran out";
  EXPECT_EQ(lease_of(leases, "nat", "52:54:00:00:00:01", 100), std::nullopt);
  // A lease that never runs out (expiry 0) outlasts the others.
  auto with_forever = leases;
  with_forever.push_back({"nat", mac, "198.51.100.9", false, 0});
  EXPECT_EQ(lease_of(with_forever, "nat", mac, 100)->address, "198.51.100.9");
}

// The seam: leases as the test says, and a count of every question to the guest agent.
class Leases final : public ForwardingHypervisor {
 public:
  using ForwardingHypervisor::ForwardingHypervisor;
  // `listed` false: a driver that keeps no list of leases (libvirt's test driver, unforged).
  std::vector<libvirt::DhcpLease> dhcp_leases() override {
    return listed ? leases : ForwardingHypervisor::dhcp_leases();
  }
  std::string agent_command(const std::string& name, const std::string& json,
                            std::chrono::seconds timeout) override {
    ++agent;
    return ForwardingHypervisor::agent_command(name, json, timeout);
  }
  std::vector<libvirt::DhcpLease> leases;
  bool listed = true;
  std::atomic<int> agent{0};
};

class NoBridges final : public HostProbe {
 public:
  bool bridge_exists(const std::string&) const override { return false; }
  std::vector<std::string> bridge_ports(const std::string&) const override { return {}; }
};

class security_guest_address_node : public ::testing::Test {
 protected:
  security_guest_address_node() {
    image::CacheOptions cache;
    cache.cloud_image_path = dir_.path() / "cloud-images";
    cache.base_image_path = dir_.path() / "base";
    cache_ = std::make_unique<image::ImageCache>(cache);
    LibvirtNodeSettings settings;
    settings.node.images_path = dir_.path().string();
    settings.host_addresses = [this] { return host_; };
    node_ = std::make_unique<LibvirtNode>(seam_, *cache_, disks_, bridges_, settings);
    space_.id = "guest-address-" + std::to_string(::getpid());
    space_.domain_name = "bwaddr-" + std::to_string(::getpid());
    mac_ = plan::mac_for(space_.id, 0);
    inner_.define("<domain type='test'><name>" + space_.domain_name +
                  "</name><memory unit='MiB'>64</memory><os><type>hvm</type></os><devices>"
                  "<interface type='network'><mac address='" +
                  mac_ + "'/><source network='default'/></interface></devices></domain>");
    inner_.start(space_.domain_name);
  }
  ~security_guest_address_node() override {
    try {
      inner_.destroy(space_.domain_name);
      inner_.undefine(space_.domain_name);
    } catch (...) {
    }
  }

  libvirt::DhcpLease own(const std::string& address, std::int64_t lasts = 600) const {
    return {"default", mac_, address, false, std::time(nullptr) + lasts};
  }
  std::string refusal() {
    try {
      node_->open_port(space_, 22, std::chrono::milliseconds(200));
    } catch (const EngineError& e) {
      EXPECT_EQ(e.kind(), EngineError::Kind::Conflict);
      return e.what();
    }
    ADD_FAILURE() << "connected";
    return "";
  }

  test_support::TempDir dir_;
  libvirt::LibvirtHypervisor inner_{libvirt::LibvirtOptions{"test:///default"}};
  Leases seam_{inner_};
  util::SystemProcessRunner runner_;
  image::Disks disks_{runner_};
  std::unique_ptr<image::ImageCache> cache_;
  NoBridges bridges_;
  std::set<std::uint32_t> host_;
  std::unique_ptr<LibvirtNode> node_;
  store::Space space_;
  std::string mac_;
};

TEST_F(security_guest_address_node, TheOwnLeaseInTheOwnNetworkAndNeverTheAgent) {
  seam_.leases = {{"elsewhere", mac_, "10.9.9.9", false, std::time(nullptr) + 9000},
                  {"default", "52:54:00:00:00:01", "192.168.122.40", false, 0},
                  own("192.168.122.41", 100),
                  own("192.168.122.42", 900)};
  EXPECT_EQ(node_->address(space_), "192.168.122.42");
  const auto listed = node_->addresses({space_});
  EXPECT_EQ(listed.at(space_.id), "192.168.122.42");
  // No lease of its own: no address at all (the guest's agent is never asked instead).
  seam_.leases = {{"elsewhere", mac_, "10.9.9.9", false, std::time(nullptr) + 9000}};
  EXPECT_EQ(node_->address(space_), std::nullopt);
  EXPECT_THAT(refusal(), HasSubstr("holds no DHCP lease in the network default"));
  EXPECT_EQ(seam_.agent, 0) << "the guest agent was asked for an address";
}

// A lease for the gateway's or the host's own address (however dnsmasq came to write it)
// reaches nothing: not the tunnel, not the list.
TEST_F(security_guest_address_node, NeverTheGatewayNorTheHost) {
  seam_.leases = {own("192.168.122.1")};  // the test driver's network "default" is .1
  EXPECT_EQ(node_->address(space_), std::nullopt);
  EXPECT_THAT(refusal(), HasSubstr("192.168.122.1 is the network's gateway"));
  host_ = {ip("192.168.122.77")};
  seam_.leases = {own("192.168.122.77")};
  EXPECT_EQ(node_->address(space_), std::nullopt);
  EXPECT_THAT(refusal(), HasSubstr("192.168.122.77 is an address of this host"));
  EXPECT_TRUE(node_->addresses({space_}).empty());
  // A bridged space's address is bowline's: refused too once the host has it.
  space_.ip = "192.168.122.77";
  EXPECT_THAT(refusal(), HasSubstr("an address of this host"));
}

// Where the driver lists no leases, space info reads the NIC's lease from libvirt for the one
// domain; the list of spaces reads the same, so it shows the address the space's page shows
// (and still never the guest agent's word).
TEST_F(security_guest_address_node, TheListShowsTheAddressSpaceInfoShows) {
  seam_.listed = false;
  const auto info = node_->address(space_);
  ASSERT_TRUE(info) << "the test driver reports a lease for the domain's NIC";
  const auto listed = node_->addresses({space_});
  ASSERT_EQ(listed.count(space_.id), 1u);
  EXPECT_EQ(listed.at(space_.id), *info);
  // Refused alike: an address of this host is in neither.
  host_ = {ip(info->c_str())};
  EXPECT_EQ(node_->address(space_), std::nullopt);
  EXPECT_TRUE(node_->addresses({space_}).empty());
  EXPECT_EQ(seam_.agent, 0) << "the guest agent was asked for an address";
}

TEST(security_guest_address, IpamGivesNoSpaceAnAddressOfTheHost) {
  test_support::TempDir dir;
  util::ManualClock clock;
  store::Store store(dir.path() / "bowline.db", clock);
  const auto loaded = spec::load_spec(
      "name: x\nimage: tiny\nnetwork:\n  mode: bridged\n  bridge: br0\n  cidr: 198.51.100.0/24\n"
      "  gateway: 198.51.100.1\n  ip_range_start: 198.51.100.10\n  ip_range_end: 198.51.100.12\n",
      nullptr);
  ASSERT_TRUE(loaded.spec);
  const auto& network = loaded.spec->network;
  const auto owner = store.users().create({"alice", "", "", {}, "", {}, {}}).id;
  const auto tmpl = store.templates().create("t", "image: tiny\n").id;
  for (const std::string id : {"a", "b"}) {
    store::NewSpace s;
    s.id = s.name = s.domain_name = s.uuid = id;
    s.owner_id = owner;
    s.template_id = tmpl;
    store.spaces().create(s);
  }
  Ipam ipam(store, [] { return std::set<std::uint32_t>{ip("198.51.100.10")}; });
  EXPECT_EQ(store::format_ipv4(ipam.lease_next(network, "a").ip), "198.51.100.11");
  EXPECT_THAT(ipam.unusable(network, "198.51.100.10"), HasSubstr("an address of this host"));
  EXPECT_THROW(ipam.lease_exact(network, "b", "198.51.100.10"), EngineError);
}

TEST(security_guest_address, NoDnatToAnAddressNoGuestHas) {
  for (const char* address : {"127.0.0.1", "0.0.0.0", "169.254.0.9", "255.255.255.255"})
    EXPECT_THROW(nft_ruleset({{"s", "tcp", 20000, address, 22}}, "any"), std::invalid_argument)
        << address;
}

}  // namespace
}  // namespace bowline::engine
