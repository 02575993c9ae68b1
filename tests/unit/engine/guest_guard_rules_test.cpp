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

// Sends one DHCP request frame on IFACE from SOURCE_MAC asking for CHADDR with BOOTP op OP,
// COUNT times: python3 dhcp.py IFACE SOURCE_MAC CHADDR OP COUNT.
constexpr const char* kDhcpSender = R"(
import socket, struct, sys
iface, source, chaddr = sys.argv[1], sys.argv[2], sys.argv[3]
op, count = int(sys.argv[4]), int(sys.argv[5])
mac = lambda t: bytes.fromhex(t.replace(':', ''))
def checksum(b):
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff
bootp = struct.pack('!BBBBIHH16s16s64s128s', op, 1, 6, 0, 0x1234, 0, 0x8000, bytes(16),
                    mac(chaddr) + bytes(10), bytes(64), bytes(128))
bootp += bytes([99, 130, 83, 99, 53, 1, 1, 255])
udp = struct.pack('!HHHH', 68, 67, 8 + len(bootp), 0) + bootp
ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, bytes(4), bytes([255] * 4))
ip = ip[:10] + struct.pack('!H', checksum(ip)) + ip[12:]
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((iface, 0))
for _ in range(count):
    s.send(bytes([255] * 6) + mac(source) + bytes([8, 0]) + ip + udp)
)";

// The packets a rule of the listed chain counted, by the rule's comment.
std::uint64_t counted(const std::string& listed, const std::string& comment) {
  const auto at = listed.find("comment \"" + comment + "\"");
  if (at == std::string::npos) return 0;
  const auto line = listed.rfind('\n', at);
  const auto packets = listed.find("counter packets ", line);
  return packets < at ? std::stoull(listed.substr(packets + 16)) : 0;
}

// Real frames through a real bridge port named as the guard names a NIC: a guest asks DHCP for
// its own hardware address only, with BOOTREQUESTs only, at a client's pace.
TEST(security_guest_guard_dhcp, RequestsForAnotherHardwareAddressAreDropped) {
  test_support::TempDir dir;
  const GuardScripts scripts("abc");
  test_support::write_file(dir.file("guard.nft"), scripts.create() + scripts.put(kNat, {}));
  test_support::write_file(dir.file("dhcp.py"), kDhcpSender);
  const auto send = "python3 " + dir.file("dhcp.py") + " peer0 " + kNat.mac + " ";
  const auto list = "nft list chain bridge bowline_abc out_" + kNat.tap;
  const std::vector<std::string> lines{
      "set -e",
      "ip link add br0 type bridge",
      "ip link add " + kNat.tap + " type veth peer name peer0",
      "ip link set " + kNat.tap + " master br0",
      "ip link set peer0 address " + kNat.mac,
      "for l in br0 " + kNat.tap + " peer0; do ip link set $l up; done",
      "nft -f " + dir.file("guard.nft"),
      send + kNat.mac + " 1 1",        // its own: passes
      send + "52:54:00:99:99:99 1 1",  // for another hardware address
      send + kNat.mac + " 2 1",        // a BOOTREPLY
      list + " > " + dir.file("one"),
      send + kNat.mac + " 1 40",  // a flood
      list,
  };
  std::string sh;
  for (const auto& l : lines) sh += l + "\n";
  const auto result = in_own_netns(sh);
  if (!result) GTEST_SKIP() << "needs root and unshare -n (CI has both)";
  ASSERT_EQ(result->exit_code, 0) << result->err;
  const auto one = test_support::read_file(dir.file("one"));
  EXPECT_EQ(counted(one, "a DHCP client's request"), 1u) << one;
  EXPECT_EQ(counted(one, "a DHCP request for another hardware address"), 1u) << one;
  EXPECT_EQ(counted(one, "not a DHCP request"), 1u) << one;
  EXPECT_EQ(counted(one, "not its MAC"), 0u) << one;
  // 41 requests at once: past the burst, the rest wait for a client's pace.
  EXPECT_GE(counted(result->out, "DHCP requests faster than a client's"), 5u) << result->out;
  EXPECT_LE(counted(result->out, "a DHCP client's request"), 36u) << result->out;
}

}  // namespace
}  // namespace bowline::engine
