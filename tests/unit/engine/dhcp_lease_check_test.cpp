// node check's dhcp:<network>: a NAT network whose dnsmasq leases by client id is named, with
// the fix; one with dhcp-ignore-clid passes. The networks are what a test says.
#include "engine/dhcp_lease_check.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "forwarding_hypervisor.hpp"
#include "libvirt/libvirt_hypervisor.hpp"

namespace bowline::engine {
namespace {

using ::testing::HasSubstr;

class Networks final : public ForwardingHypervisor {
 public:
  using ForwardingHypervisor::ForwardingHypervisor;
  std::optional<libvirt::NetworkInfo> lookup_network(const std::string& name) override {
    if (name == "gone") return std::nullopt;
    libvirt::NetworkInfo info;
    info.name = name;
    info.active = true;
    if (name != "nodhcp") info.dhcp_servers = {"198.51.100.1"};
    info.one_lease_per_mac = name == "strict";
    return info;
  }
};

TEST(security_one_lease_per_mac, NodeCheckNamesANetworkThatLeasesByClientId) {
  libvirt::LibvirtHypervisor inner(libvirt::LibvirtOptions{"test:///default"});
  Networks networks(inner);
  const auto loose = check_one_lease_per_mac("lab", &networks);
  EXPECT_EQ(loose.name, "dhcp:lab");
  EXPECT_EQ(loose.status, CheckStatus::Warn);
  EXPECT_FALSE(loose.required);
  EXPECT_THAT(loose.detail, HasSubstr("empty the pool"));
  EXPECT_THAT(loose.fix, HasSubstr("<dnsmasq:option value='dhcp-ignore-clid'/>"));
  EXPECT_THAT(loose.fix, HasSubstr("virsh net-edit lab"));
  EXPECT_EQ(check_one_lease_per_mac("strict", &networks).status, CheckStatus::Ok);
  EXPECT_EQ(check_one_lease_per_mac("nodhcp", &networks).status, CheckStatus::Ok);
  EXPECT_EQ(check_one_lease_per_mac("gone", &networks).status, CheckStatus::Ok)
      << "a missing network is its own check's failure";
}

}  // namespace
}  // namespace bowline::engine
