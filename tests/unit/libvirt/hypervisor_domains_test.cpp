// LibvirtHypervisor's domain calls against libvirt's test driver: the lifecycle, our metadata
// read back through libvirt, errors that carry libvirt's code and name the domain, guest
// addresses, and many threads sharing one connection.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libvirt/virterror.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "hypervisor_test_support.hpp"
#include "libvirt/libvirt_hypervisor.hpp"

namespace bowline::libvirt {
namespace {

using namespace hvtest;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class HypervisorDomains : public ::testing::Test {
 protected:
  LibvirtHypervisor hv{LibvirtOptions{.uri = node_uri()}};
};

TEST_F(HypervisorDomains, DefineStartShutdownDestroyUndefine) {
  const auto metadata = sample_metadata();
  const auto defined = hv.define(test_domain_xml("alice-dev", kUuid, &metadata));
  EXPECT_EQ(defined.name, "alice-dev");
  EXPECT_EQ(defined.uuid, kUuid);
  EXPECT_EQ(defined.status.state, DomainState::Shutoff);
  EXPECT_TRUE(defined.persistent);
  EXPECT_FALSE(defined.autostart);
  ASSERT_TRUE(defined.metadata);
  EXPECT_EQ(*defined.metadata, metadata);

  hv.start("alice-dev");
  EXPECT_EQ(hv.state("alice-dev").state, DomainState::Running);

  hv.shutdown("alice-dev");  // the test driver powers off at once
  EXPECT_EQ(hv.state("alice-dev").state, DomainState::Shutoff);

  hv.start("alice-dev");
  EXPECT_TRUE(hv.destroy("alice-dev"));
  EXPECT_EQ(hv.state("alice-dev").state, DomainState::Shutoff);
  EXPECT_FALSE(hv.destroy("alice-dev")) << "not running: nothing to destroy";

  EXPECT_TRUE(hv.undefine("alice-dev"));
  EXPECT_FALSE(hv.lookup("alice-dev"));
  EXPECT_FALSE(hv.undefine("alice-dev")) << "no such domain is not an error";
}

TEST_F(HypervisorDomains, LookupAndListTellOursFromOthers) {
  const auto metadata = sample_metadata("sp-1");
  hv.define(test_domain_xml("ours", kUuid, &metadata));
  hv.define(test_domain_xml("foreign", "0e6a55b1-2f3b-4c5d-9e8f-a1b2c3d4e5f6"));
  hv.start("foreign");

  const auto ours = hv.lookup("ours");
  ASSERT_TRUE(ours);
  ASSERT_TRUE(ours->metadata);
  EXPECT_EQ(ours->metadata->space_id, "sp-1");
  EXPECT_EQ(ours->metadata->owner, "alice");

  const auto foreign = hv.lookup("foreign");
  ASSERT_TRUE(foreign);
  EXPECT_FALSE(foreign->metadata);
  EXPECT_EQ(foreign->status.state, DomainState::Running);

  EXPECT_FALSE(hv.lookup("missing"));

  const auto all = hv.list();
  ASSERT_EQ(all.size(), 2u);
  for (const auto& d : all) {
    if (d.name == "ours") {
      ASSERT_TRUE(d.metadata);
      EXPECT_EQ(*d.metadata, metadata);
      EXPECT_EQ(d.status.state, DomainState::Shutoff);
    } else {
      EXPECT_EQ(d.name, "foreign");
      EXPECT_FALSE(d.metadata);
      EXPECT_EQ(d.status.state, DomainState::Running);
    }
  }
}

TEST_F(HypervisorDomains, RedefineWithSameUuidUpdatesButAnotherUuidIsRefused) {
  hv.define(test_domain_xml("dup", kUuid));
  hv.define(test_domain_xml("dup", kUuid, nullptr, false, 131072));
  EXPECT_THAT(hv.domain_xml("dup", true), HasSubstr("131072"));

  const auto e = error_from(
      [&] { hv.define(test_domain_xml("dup", "0e6a55b1-2f3b-4c5d-9e8f-a1b2c3d4e5f6")); });
  EXPECT_THAT(e.what(), StartsWith("domain \"dup\": cannot define: "));
  EXPECT_THAT(e.what(), HasSubstr("already"));
  EXPECT_NE(e.code(), 0);
  EXPECT_EQ(e.error_domain(), VIR_FROM_DOMAIN);
  EXPECT_FALSE(e.is_no_domain());
}

TEST_F(HypervisorDomains, ValidationRejectsBadXmlNamingTheDomain) {
  const auto e = error_from([&] {
    hv.define(
        "<domain type='test'><name>bad</name><memory>x</memory><os><type>hvm</type></os>"
        "</domain>");
  });
  EXPECT_THAT(e.what(), StartsWith("domain \"bad\": cannot define: "));
  const auto garbage = error_from([&] { hv.define("not xml"); });
  EXPECT_THAT(garbage.what(), StartsWith("domain XML: cannot define: "));
}

TEST_F(HypervisorDomains, MissingDomainIsNoDomainEverywhere) {
  const auto start = error_from([&] { hv.start("nope"); });
  EXPECT_TRUE(start.is_no_domain());
  EXPECT_EQ(start.code(), VIR_ERR_NO_DOMAIN);
  EXPECT_THAT(start.what(), StartsWith("domain \"nope\": cannot start: "));
  EXPECT_THAT(start.cause(), HasSubstr("not found"));

  EXPECT_TRUE(error_from([&] { hv.state("nope"); }).is_no_domain());
  EXPECT_TRUE(error_from([&] { hv.destroy("nope"); }).is_no_domain());
  EXPECT_TRUE(error_from([&] { hv.shutdown("nope"); }).is_no_domain());
  EXPECT_TRUE(error_from([&] { hv.domain_xml("nope"); }).is_no_domain());
  EXPECT_TRUE(error_from([&] { hv.set_autostart("nope", true); }).is_no_domain());
  EXPECT_TRUE(
      error_from([&] { hv.interface_addresses("nope", AddressSource::Lease); }).is_no_domain());
}

TEST_F(HypervisorDomains, StartingARunningDomainFailsNamingIt) {
  hv.define(test_domain_xml("twice", kUuid));
  hv.start("twice");
  const auto e = error_from([&] { hv.start("twice"); });
  // The test driver calls it an internal error; QEMU an invalid operation (see the e2e test).
  EXPECT_THAT(e.what(), StartsWith("domain \"twice\": cannot start: "));
  EXPECT_THAT(e.what(), HasSubstr("already running"));
}

TEST_F(HypervisorDomains, FlagsTheTestDriverLacksAreReportedAsUnsupported) {
  hv.define(test_domain_xml("flags", kUuid));
  EXPECT_TRUE(error_from([&] { hv.start("flags", {.paused = true}); }).is_unsupported());
  EXPECT_TRUE(error_from([&] { hv.start("flags", {.reset_nvram = true}); }).is_unsupported());
  hv.start("flags");
  EXPECT_TRUE(error_from([&] {
                hv.agent_command("flags", R"({"execute":"guest-ping"})", std::chrono::seconds(1));
              }).is_unsupported());
  EXPECT_TRUE(error_from([&] { hv.open_console("flags"); }).is_unsupported());
  EXPECT_THROW(hv.agent_command("flags", "{}", std::chrono::seconds(0)), std::invalid_argument);
}

TEST_F(HypervisorDomains, AutostartAndXml) {
  const auto metadata = sample_metadata();
  hv.define(test_domain_xml("auto", kUuid, &metadata));
  hv.set_autostart("auto", true);
  EXPECT_TRUE(hv.lookup("auto")->autostart);
  hv.set_autostart("auto", false);
  EXPECT_FALSE(hv.lookup("auto")->autostart);

  const auto xml = hv.domain_xml("auto");
  EXPECT_THAT(xml, HasSubstr(kMetadataNamespace));
  EXPECT_EQ(read_domain_metadata(xml), metadata);
}

TEST_F(HypervisorDomains, InterfaceAddressesFromLeases) {
  hv.define(test_domain_xml("net", kUuid, nullptr, true));
  EXPECT_TRUE(error_from([&] {
                hv.interface_addresses("net", AddressSource::Lease);
              }).is_operation_invalid())
      << "not running";
  hv.start("net");
  const auto addresses = hv.interface_addresses("net", AddressSource::Lease);
  ASSERT_EQ(addresses.size(), 1u);
  EXPECT_EQ(addresses[0].mac, "52:54:00:aa:bb:cc");
  EXPECT_THAT(addresses[0].address, StartsWith("192.168.122."));
  EXPECT_EQ(addresses[0].prefix, 24u);
  EXPECT_FALSE(addresses[0].ipv6);
  EXPECT_FALSE(addresses[0].interface.empty());
}

TEST_F(HypervisorDomains, ManyThreadsShareOneConnection) {
  constexpr int kThreads = 8, kRounds = 10;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        for (int r = 0; r < kRounds; ++r) {
          const auto name = "par-" + std::to_string(t) + "-" + std::to_string(r);
          char uuid[37];
          std::snprintf(uuid, sizeof uuid, "00000000-0000-4000-8000-%012d", t * 100 + r);
          const auto metadata = sample_metadata(name);
          hv.define(test_domain_xml(name, uuid, &metadata));
          hv.start(name);
          const auto info = hv.lookup(name);
          if (!info || !info->metadata || info->metadata->space_id != name) ++failures;
          hv.destroy(name);
          hv.undefine(name);
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_TRUE(hv.list().empty());
  EXPECT_EQ(hv.connection_count(), 1u);
}

}  // namespace
}  // namespace bowline::libvirt
