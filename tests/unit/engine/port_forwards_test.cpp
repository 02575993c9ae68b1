// The nftables ruleset for external ports, and what the forwarder runs on the host (a scripted
// ProcessRunner: the real nft and iptables run in e2e.external_ports).
#include "engine/port_forwards.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../common/scratch_files.hpp"

namespace bowline::engine {
namespace {

using ::testing::HasSubstr;

TEST(NftRuleset, ReplacesTheWholeTableInOneTransaction) {
  const auto text = nft_ruleset({{"space-a", "tcp", 20000, "192.168.122.5", 22},
                                 {"space-b", "tcp", 20001, "192.168.122.9", 8080}},
                                "any");
  // A table is declared before it is deleted (deleting a missing one fails the transaction).
  EXPECT_EQ(text.rfind("table ip bowline\ndelete table ip bowline\ntable ip bowline {\n", 0), 0u)
      << text;
  EXPECT_THAT(text, HasSubstr("type nat hook prerouting priority dstnat;"));
  EXPECT_THAT(text, HasSubstr("fib daddr type local ip daddr != 127.0.0.0/8 tcp dport 20000 ct "
                              "mark set 0x626f776c dnat to 192.168.122.5:22 comment \"space "
                              "space-a\""));
  EXPECT_THAT(text, HasSubstr("fib daddr type local ip daddr != 127.0.0.0/8 tcp dport 20001 ct "
                              "mark set 0x626f776c dnat to 192.168.122.9:8080"));
  EXPECT_THAT(text, HasSubstr("ct mark 0x626f776c masquerade"));
  // Nothing to forward: the table goes.
  EXPECT_EQ(nft_ruleset({}, "any"), "table ip bowline\ndelete table ip bowline\n");
}

// security: guests' ports never on the web UI's address (its cookies go to every port of it).
TEST(security_external_ruleset, PortsArePublishedOnTheOperatorsAddressOnly) {
  const auto text = nft_ruleset({{"space-a", "tcp", 20000, "192.168.122.5", 22}}, "198.51.100.9");
  EXPECT_THAT(text, HasSubstr("prerouting priority dstnat; policy accept;\n    fib daddr type "
                              "local ip daddr 198.51.100.9 tcp dport 20000"));
  EXPECT_THAT(text, HasSubstr("priority -100; policy accept;\n    fib daddr type local ip daddr "
                              "198.51.100.9 tcp dport 20000"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("!= 127.0.0.0/8")));
  EXPECT_THROW(nft_ruleset({{"space-a", "tcp", 20000, "192.168.122.5", 22}}, "1.2.3.4; flush"),
               std::invalid_argument);
}

class ScriptedRunner final : public util::ProcessRunner {
 public:
  std::vector<std::vector<std::string>> calls;
  std::vector<std::string> scripts;  // what nft was given
  util::ProcessResult run(const std::vector<std::string>& argv,
                          std::chrono::milliseconds) override {
    calls.push_back(argv);
    if (argv[0] == "nft") scripts.push_back(test_support::read_file(argv[2]));
    if (argv[0] == "iptables" && argv[2] == "-C") return {1, "", "", false};  // rule missing
    if (argv[0] == "iptables" && argv[2] == "-D") return {1, "", "", false};  // jump missing
    return {0, "", "", false};
  }
};

TEST(NftPortForwarder, AcceptsMarkedConnectionsFirstInForwardAndLoadsTheTable) {
  ScriptedRunner runner;
  test_support::TempDir dir;
  test_support::write_file(dir.file("ip_forward"), "1\n");
  NftPortForwarder forwarder(runner, dir.path().string(), "any", dir.file("ip_forward"));
  forwarder.apply({{"space-a", "tcp", 20000, "192.168.122.5", 22}});
  auto has_call = [&](const std::vector<std::string>& argv) {
    return std::find(runner.calls.begin(), runner.calls.end(), argv) != runner.calls.end();
  };
  EXPECT_TRUE(has_call({"iptables", "-w", "-A", "BOWLINE_FORWARD", "-m", "connmark", "--mark",
                        "0x626f776c", "-j", "ACCEPT"}));
  EXPECT_TRUE(has_call({"iptables", "-w", "-I", "FORWARD", "1", "-j", "BOWLINE_FORWARD"}));
  ASSERT_EQ(runner.scripts.size(), 1u);
  EXPECT_THAT(runner.scripts[0], HasSubstr("dnat to 192.168.122.5:22"));
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1)
      << "the script file is left behind";

  // A host that does not forward: nothing is loaded, and the error says what to do.
  test_support::write_file(dir.file("ip_forward"), "0\n");
  runner.scripts.clear();
  try {
    forwarder.apply({{"space-a", "tcp", 20000, "192.168.122.5", 22}});
    ADD_FAILURE() << "published with forwarding off";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("sysctl -w net.ipv4.ip_forward=1"));
  }
  EXPECT_TRUE(runner.scripts.empty());
  forwarder.apply({});  // withdrawing needs no forwarding
  EXPECT_EQ(runner.scripts.size(), 1u);
}

}  // namespace
}  // namespace bowline::engine
