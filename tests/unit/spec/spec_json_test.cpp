// The JSON form of a validated spec (bowline template show -o json): defaults filled in,
// sizes in bytes.
#include <gtest/gtest.h>

#include "spec/spec_json.hpp"
#include "spec_test_support.hpp"

namespace bowline::spec {
namespace {

TEST(SpecJson, DefaultsAndSizesInBytes) {
  const auto r = test::load(R"(
image: debian-12
memory: 4G
disk: 20G
network: {cidr: 198.51.100.0/24, gateway: 198.51.100.1}
devices: [10de:2684]
)",
                            test::alice_dev());
  ASSERT_TRUE(test::Valid(r));
  const auto j = to_json(*r.spec);
  EXPECT_EQ(j["name"], "alice-dev");
  EXPECT_EQ(j["hostname"], "dev");
  EXPECT_EQ(j["image"]["kind"], "library");
  EXPECT_EQ(j["sizing"]["source"], "memory/cpus");
  EXPECT_EQ(j["sizing"]["memoryBytes"], 4294967296ull);
  EXPECT_EQ(j["sizing"]["vcpus"], 1);
  EXPECT_EQ(j["diskBytes"], 21474836480ull);
  EXPECT_EQ(j["devices"][0]["kind"], "vendor-product");
  EXPECT_EQ(j["network"]["mode"], "bridged");
  EXPECT_EQ(j["network"]["bridge"], "br0");
  EXPECT_EQ(j["network"]["ipRangeStart"], "198.51.100.1");
  EXPECT_EQ(j["network"]["ipRangeEnd"], "198.51.100.254");
  EXPECT_EQ(j["network"]["gateway"], "198.51.100.1");
  EXPECT_TRUE(j["instanceType"].is_null());
  EXPECT_TRUE(j["firmware"]["bootloader"].is_null());
  EXPECT_EQ(j["runStrategy"], "Always");
  EXPECT_EQ(j["externalPorts"], nlohmann::ordered_json::array({22}));
  EXPECT_EQ(j["display"], false);
  EXPECT_EQ(j["console"], false);
  EXPECT_NO_THROW((void)j.dump());
}

TEST(SpecJson, ResourcesSizing) {
  const auto r = test::load(R"(
image: debian-12
network: {mode: nat}
instanceType: u1.medium
resources: {cpu: 2, sockets: 2, memory: 1.5Gi}
)");
  ASSERT_TRUE(test::Valid(r));
  const auto j = to_json(*r.spec);
  EXPECT_EQ(j["sizing"]["source"], "resources");
  EXPECT_EQ(j["sizing"]["memoryBytes"], 1610612736ull);
  EXPECT_EQ(j["sizing"]["vcpus"], 4);
  EXPECT_EQ(j["instanceType"], "u1.medium");
}

}  // namespace
}  // namespace bowline::spec
