// The guest guard's nftables scripts: what they say, what they refuse to say, and that the real
// nft loads them (in a network namespace of the test's own, so the host's tables are never
// touched; skipped where namespaces cannot be made).
#include "engine/guest_guard_rules.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "../common/addresses.hpp"
#include "../common/scratch_files.hpp"
#include "util/process.hpp"

namespace bowline::engine {
namespace {

using test_support::ip;

using ::testing::HasSubstr;
using ::testing::Not;

const GuardedNic kBridged{"bwabc0123456700", "52:54:00:12:34:56", ip("198.51.100.20"), ""};
const GuardedNic kNat{"bwabc89abcdef00", "52:54:00:ab:cd:ef", std::nullopt, "default"};

TEST(GuardScripts, OneTablePerServerThatCutsOffItsOwnDevicesOnly) {
  const GuardScripts scripts("abc");
  EXPECT_EQ(scripts.table(), "bowline_abc");
  const auto create = scripts.create();
  EXPECT_EQ(create.rfind("table bridge bowline_abc\ndelete table bridge bowline_abc\n", 0), 0u);
  EXPECT_THAT(create, HasSubstr("type filter hook prerouting priority -300; policy accept;"));
  EXPECT_THAT(create, HasSubstr("iifname vmap @from_guest\n    iifname \"bwabc*\" counter drop"));
  EXPECT_THAT(create, HasSubstr("oifname vmap @to_guest\n    oifname \"bwabc*\" counter drop"));
  EXPECT_THAT(create, Not(HasSubstr("\"bw*\"")));
}

TEST(GuardScripts, ANicSendsOnlyFromItsMacAndAddressesAndServesNoDhcp) {
  const GuardScripts scripts("abc");
  const auto put = scripts.put(kBridged, {ip("198.51.100.20")});
  const std::string out = "add rule bridge bowline_abc out_bwabc0123456700 ";
  EXPECT_THAT(put, HasSubstr(out + "ether saddr != 52:54:00:12:34:56 counter drop"));
  EXPECT_THAT(put, HasSubstr(out + "ether type ip udp sport 67 udp dport 68 counter drop"));
  EXPECT_THAT(put, HasSubstr(out + "ip saddr @addr_bwabc0123456700 accept"));
  EXPECT_THAT(put, HasSubstr(out + "arp saddr ether 52:54:00:12:34:56 arp saddr ip "
                                   "@addr_bwabc0123456700 accept"));
  EXPECT_THAT(put, HasSubstr("add element bridge bowline_abc addr_bwabc0123456700 { "
                             "198.51.100.20 }"));
  EXPECT_THAT(put, HasSubstr("add element bridge bowline_abc from_guest { \"bwabc0123456700\" : "
                             "jump out_bwabc0123456700 }"));
  // The set is flushed before it is filled: its addresses are exactly these.
  EXPECT_LT(put.find("flush set bridge bowline_abc addr_bwabc0123456700"),
            put.find("add element bridge bowline_abc addr_bwabc0123456700"));
  // No address yet: the set stays empty (only DHCP requests pass).
  EXPECT_THAT(scripts.put(kNat, {}), Not(HasSubstr("add element bridge bowline_abc addr_")));
}

TEST(GuardScripts, RefusesWhatItDidNotMake) {
  EXPECT_THROW(GuardScripts("abcd"), std::invalid_argument);
  EXPECT_THROW(GuardScripts("AB1"), std::invalid_argument);
  EXPECT_THROW(GuardScripts("a\"b"), std::invalid_argument);
  const GuardScripts scripts("abc");
  auto nic = kBridged;
  nic.tap = "bwdef0123456700";  // another server's
  EXPECT_THROW(scripts.check(nic), std::invalid_argument);
  nic.tap = "bwabc01234\"; flush ruleset";
  EXPECT_THROW(scripts.check(nic), std::invalid_argument);
  nic = kBridged;
  nic.mac = "52:54:00:12:34:56 counter accept";
  EXPECT_THROW(scripts.put(nic, {}), std::invalid_argument);
  nic.mac = "53:54:00:12:34:56";  // multicast
  EXPECT_THROW(scripts.check(nic), std::invalid_argument);
  nic.mac = "52:54:00:AB:CD:EF";  // as libvirt never writes it
  EXPECT_THROW(scripts.check(nic), std::invalid_argument);
  nic = kNat;
  nic.network = "default }\nflush ruleset";
  EXPECT_THROW(scripts.check(nic), std::invalid_argument);
  EXPECT_THROW(scripts.remove("vnet0"), std::invalid_argument);
  EXPECT_THROW(scripts.addresses("bwabc0123456700; x", {}), std::invalid_argument);
}

// Runs `sh -c SCRIPT` in a network namespace of its own (unshare -n): nft there sees an empty
// ruleset and leaves the host's alone. Returns nullopt where that cannot be done here.
std::optional<util::ProcessResult> in_own_netns(const std::string& script) {
  util::SystemProcessRunner runner;
  if (::geteuid() != 0) return std::nullopt;
  const auto probe =
      runner.run({"unshare", "-n", "nft", "list", "ruleset"}, std::chrono::seconds(20));
  if (probe.exit_code != 0) return std::nullopt;
  return runner.run({"unshare", "-n", "sh", "-c", script}, std::chrono::seconds(60));
}

TEST(GuardScripts, TheRealNftLoadsThemAndAReplayChangesNothing) {
  test_support::TempDir dir;
  const GuardScripts scripts("abc");
  const std::vector<std::string> steps{
      scripts.create() + scripts.put(kBridged, {ip("198.51.100.20")}) + scripts.put(kNat, {}),
      scripts.put(kBridged, {ip("198.51.100.20")}),  // again: no error, no duplicate
      scripts.addresses(kNat.tap, {ip("192.168.122.7"), ip("192.168.122.9")}),
      scripts.remove(kBridged.tap),
  };
  std::string sh = "set -e\n";
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto file = dir.file("step" + std::to_string(i) + ".nft");
    test_support::write_file(file, steps[i]);
    sh += "nft -f " + file + "\n";
  }
  sh += "nft list table bridge bowline_abc\n";
  const auto result = in_own_netns(sh);
  if (!result) GTEST_SKIP() << "needs root and unshare -n (CI has both)";
  ASSERT_EQ(result->exit_code, 0) << result->err;
  const auto& listed = result->out;
  EXPECT_THAT(listed, Not(HasSubstr("bwabc0123456700")));  // removed, chains, set and entries
  EXPECT_THAT(listed, HasSubstr("\"bwabc89abcdef00\" : jump out_bwabc89abcdef00"));
  EXPECT_THAT(listed, HasSubstr("elements = { 192.168.122.7, 192.168.122.9 }"));
  // One "not its MAC" rule: the replayed put flushed the chain before filling it.
  std::size_t rules = 0;
  for (auto at = listed.find("not its MAC"); at != std::string::npos;
       at = listed.find("not its MAC", at + 1))
    ++rules;
  EXPECT_EQ(rules, 1u) << listed;
}

TEST(GuardScripts, RemovingANicThatIsNotThereFailsTheWholeTransaction) {
  test_support::TempDir dir;
  const GuardScripts scripts("abc");
  test_support::write_file(dir.file("a.nft"), scripts.create() + scripts.put(kNat, {}));
  test_support::write_file(dir.file("b.nft"),
                           scripts.put(kNat, {ip("10.0.0.5")}) + scripts.remove(kBridged.tap));
  const auto result =
      in_own_netns("nft -f " + dir.file("a.nft") + " && ! nft -f " + dir.file("b.nft") +
                   " && nft list set bridge bowline_abc " + "addr_bwabc89abcdef00");
  if (!result) GTEST_SKIP() << "needs root and unshare -n (CI has both)";
  ASSERT_EQ(result->exit_code, 0) << result->err;
  // Nothing of the failed script took: the guard rebuilds the table after such a failure.
  EXPECT_THAT(result->out, Not(HasSubstr("10.0.0.5")));
}

}  // namespace
}  // namespace bowline::engine
