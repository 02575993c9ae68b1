// Bridged addresses through the real store: templates whose ranges overlap on one bridge share
// one address space, so no address is handed out twice.
#include "engine/ipam.hpp"

#include <gtest/gtest.h>

#include "../common/scratch_files.hpp"
#include "engine/engine_error.hpp"
#include "spec/loader.hpp"
#include "store/store.hpp"
#include "util/clock.hpp"

namespace bowline::engine {
namespace {

spec::Network network_of(const std::string& cidr, const std::string& first,
                         const std::string& last) {
  const auto loaded = spec::load_spec(
      "name: x\nimage: tiny\nnetwork:\n  mode: bridged\n"
      "  bridge: br0\n  cidr: " +
          cidr + "\n  ip_range_start: " + first + "\n  ip_range_end: " + last + "\n",
      nullptr);
  EXPECT_TRUE(loaded.spec);
  return loaded.spec->network;
}

TEST(security_ipam, OverlappingRangesOnOneBridgeNeverShareAnAddress) {
  test_support::TempDir dir;
  util::ManualClock clock;
  store::Store store(dir.path() / "bowline.db", clock);
  const auto owner = store.users().create({"alice", "", "", {}, "", {}, {}}).id;
  const auto tmpl = store.templates().create("t", "image: tiny\n").id;
  for (const std::string id : {"a", "b", "c"}) {
    store::NewSpace s;
    s.id = s.name = s.domain_name = s.uuid = id;
    s.owner_id = owner;
    s.template_id = tmpl;
    store.spaces().create(s);
  }
  // A /24 and a /25 over the same first addresses of the same bridge.
  const auto wide = network_of("198.51.100.0/24", "198.51.100.10", "198.51.100.11");
  const auto narrow = network_of("198.51.100.0/25", "198.51.100.10", "198.51.100.20");
  Ipam ipam(store, [] { return std::set<std::uint32_t>{}; });
  const auto a = ipam.lease_next(wide, "a").ip;
  const auto b = ipam.lease_next(narrow, "b").ip;
  EXPECT_NE(a, b);
  EXPECT_EQ(store::format_ipv4(b), "198.51.100.11");
  EXPECT_THROW(ipam.lease_exact(narrow, "c", store::format_ipv4(a)), EngineError);
  // The wide range is full now: the narrow template's space took its second address.
  EXPECT_THROW(ipam.lease_next(wide, "c"), EngineError);
}

}  // namespace
}  // namespace bowline::engine
