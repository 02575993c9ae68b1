#include "store/host_ports.hpp"

#include <gtest/gtest.h>

#include "store_test_support.hpp"

namespace bowline::store {
namespace {

class HostPortTest : public testing::StoreTest {
 protected:
  void SetUp() override {
    owner_ = make_user("alice").id;
    template_ = make_template().id;
  }
  std::string space(const std::string& name) { return make_space(name, owner_, template_).id; }
  std::int64_t owner_ = 0, template_ = 0;
};

TEST_F(HostPortTest, LowestFreePortKeptPerGuestPortAndFreedWithTheSpace) {
  auto& ports = store().host_ports();
  const auto a = space("a"), b = space("b");
  EXPECT_EQ(ports.allocate(a, "tcp", 22, 20000, 20002)->host_port, 20000);
  EXPECT_EQ(ports.allocate(a, "tcp", 80, 20000, 20002)->host_port, 20001);
  EXPECT_EQ(ports.allocate(a, "tcp", 22, 20000, 20002)->host_port, 20000) << "kept";
  EXPECT_EQ(ports.allocate(b, "udp", 22, 20000, 20002)->host_port, 20000) << "udp is another space";
  EXPECT_EQ(ports.allocate(b, "tcp", 22, 20000, 20002)->host_port, 20002);
  EXPECT_FALSE(ports.allocate(b, "tcp", 80, 20000, 20002)) << "the range is exhausted";
  EXPECT_EQ(ports.of_space(a).size(), 2u);
  store().spaces().remove(a);  // the space's ports go with it
  EXPECT_TRUE(ports.of_space(a).empty());
  EXPECT_EQ(ports.allocate(b, "tcp", 80, 20000, 20002)->host_port, 20000) << "reused";
  EXPECT_EQ(ports.release(b), 3);
  EXPECT_THROW(ports.allocate("no-such-space", "tcp", 22, 20000, 20002), NotFoundError);
}

}  // namespace
}  // namespace bowline::store
