// The guest guard's bookkeeping: what it asks nft to do and when (a scripted runner; the real
// nft loads the scripts in guest_guard_rules_test, and guards real guests in
// e2e.security_guest_spoofing), what it learns from DHCP leases, what it keeps on disk.
#include "engine/guest_guard.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <condition_variable>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <thread>

#include "../common/addresses.hpp"
#include "../common/scratch_files.hpp"

namespace bowline::engine {
namespace {

using test_support::ip;

using ::testing::HasSubstr;
using ::testing::Not;

// nft as far as the guard uses it: `nft -f FILE` (kept, and followed: which chains the table
// has) and `nft list table bridge T` (the chains it has, or an error once it is gone).
class ScriptedNft final : public util::ProcessRunner {
 public:
  util::ProcessResult run(const std::vector<std::string>& argv,
                          std::chrono::milliseconds) override {
    std::lock_guard lock(mutex);
    EXPECT_EQ(argv[0], "nft");
    if (argv.size() == 5 && argv[1] == "list") return listing();
    EXPECT_EQ(argv.size(), 3u);
    scripts.push_back(test_support::read_file(argv[2]));
    changed.notify_all();
    if (fail_next > 0) {
      --fail_next;
      return {1, "", "Error: No such file or directory\nmore", false};
    }
    follow(scripts.back());
    return {0, "", "", false};
  }
  // `nft flush ruleset`: the table is gone.
  void flush() {
    std::lock_guard lock(mutex);
    table = false;
    chains.clear();
  }
  std::size_t count() {
    std::lock_guard lock(mutex);
    return scripts.size();
  }
  std::string last() {
    std::lock_guard lock(mutex);
    return scripts.empty() ? "" : scripts.back();
  }
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> scripts;
  int fail_next = 0;
  bool table = false;
  std::set<std::string> chains;

 private:
  void follow(const std::string& script) {
    std::istringstream lines(script);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream words(line);
      std::vector<std::string> w{std::istream_iterator<std::string>(words), {}};
      if (w.size() >= 2 && w[0] == "delete" && w[1] == "table") {
        table = false;
        chains.clear();
      } else if (w.size() == 4 && w[0] == "table" && w[3] == "{") {
        table = true;
      } else if (w.size() == 3 && w[0] == "chain" && w[2] == "{") {
        chains.insert(w[1]);
      } else if (w.size() == 5 && w[1] == "chain" && (w[0] == "add" || w[0] == "delete")) {
        if (w[0] == "add")
          chains.insert(w[4]);
        else
          chains.erase(w[4]);
      }
    }
  }
  util::ProcessResult listing() const {
    if (!table) return {1, "", "Error: No such file or directory", false};
    std::string out = "table bridge bowline_abc {\n";
    for (const auto& c : chains) out += "\tchain " + c + " {\n\t}\n";
    return {0, out + "}\n", "", false};
  }
};

const GuardedNic kBridged{"bwabc0123456700", "52:54:00:12:34:56", ip("198.51.100.20"), ""};
const GuardedNic kNat{"bwabc89abcdef00", "52:54:00:ab:cd:ef", std::nullopt, "default"};

struct Fixture {
  explicit Fixture(std::chrono::milliseconds every = std::chrono::milliseconds(3000))
      : poll(every) {}
  std::chrono::milliseconds poll;
  test_support::TempDir dir;
  ScriptedNft nft;
  util::ManualClock clock{1'800'000'000'000};
  std::mutex leases_mutex;
  std::vector<libvirt::DhcpLease> leases;
  std::function<void(const std::string&)> on_restored;  // what the guard tells, when set
  GuestGuard guard{nft, clock,
                   [this] {
                     std::lock_guard lock(leases_mutex);
                     return leases;
                   },
                   [this] {
                     GuestGuardOptions o;
                     o.dir = dir.path();
                     o.tag = "abc";
                     o.lease_dir = dir.path() / "leases";
                     o.lease_poll = poll;
                     o.on_restored = [this](const std::string& why) {
                       if (on_restored) on_restored(why);
                     };
                     return o;
                   }()};
  void lease(const std::string& network, const std::string& mac, const std::string& address,
             std::int64_t expiry) {
    std::lock_guard lock(leases_mutex);
    leases.push_back({network, mac, address, false, expiry});
  }
  std::int64_t now() const { return clock.now_unix_ms() / 1000; }
};

TEST(GuestGuard, WritesOnlyWhatChanged) {
  Fixture f;
  f.guard.load({});
  ASSERT_EQ(f.nft.count(), 1u);
  EXPECT_EQ(f.nft.last().rfind("table bridge bowline_abc\ndelete table", 0), 0u);
  f.guard.put("alice-dev", {kBridged});
  ASSERT_EQ(f.nft.count(), 2u);
  EXPECT_THAT(f.nft.last(), HasSubstr("add element bridge bowline_abc addr_bwabc0123456700 { "
                                      "198.51.100.20 }"));
  f.guard.put("alice-dev", {kBridged});  // every start defines the domain again: nothing to do
  EXPECT_EQ(f.nft.count(), 2u);
  // A second NIC: only it is written; the first's counters are left alone.
  f.guard.put("alice-dev", {kBridged, kNat});
  ASSERT_EQ(f.nft.count(), 3u);
  EXPECT_THAT(f.nft.last(), HasSubstr("out_bwabc89abcdef00"));
  EXPECT_THAT(f.nft.last(), Not(HasSubstr("out_bwabc0123456700")));
  // set-ip: the bridged NIC's rules are written again with the new address; the gone NIC goes.
  auto moved = kBridged;
  moved.ip = ip("198.51.100.21");
  f.guard.put("alice-dev", {moved});
  EXPECT_THAT(f.nft.last(), HasSubstr("delete chain bridge bowline_abc out_bwabc89abcdef00"));
  EXPECT_THAT(f.nft.last(), HasSubstr("{ 198.51.100.21 }"));
  f.guard.remove("alice-dev");
  EXPECT_THAT(f.nft.last(), HasSubstr("delete set bridge bowline_abc addr_bwabc0123456700"));
  EXPECT_TRUE(f.guard.domains().empty());
  const auto count = f.nft.count();
  f.guard.remove("alice-dev");
  EXPECT_EQ(f.nft.count(), count);
}

TEST(GuestGuard, RefusesADeviceAnotherDomainHas) {
  Fixture f;
  f.guard.load({});
  f.guard.put("alice-dev", {kBridged});
  try {
    f.guard.put("bob-dev", {kBridged});
    FAIL() << "two domains got one device";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("bwabc0123456700 of bob-dev is alice-dev's already"));
  }
  EXPECT_EQ(f.guard.domains().size(), 1u);
}

TEST(GuestGuard, LearnsTheLeaseOfItsMacOnItsNetworkOnly) {
  Fixture f;
  f.guard.load({});
  f.guard.put("alice-nat", {kNat});
  EXPECT_TRUE(f.guard.addresses(kNat.tap).empty());  // DHCP requests only, until a lease
  // The same MAC on another network, an IPv6 lease and one that ran out teach it nothing.
  f.lease("other", kNat.mac, "10.0.0.9", f.now() + 3600);
  f.lease("default", kNat.mac, "192.168.122.8", f.now() - 1);
  {
    std::lock_guard lock(f.leases_mutex);
    f.leases.push_back({"default", kNat.mac, "fd00::8", true, f.now() + 3600});
  }
  const auto before = f.nft.count();
  f.guard.learn();
  EXPECT_EQ(f.nft.count(), before);
  EXPECT_TRUE(f.guard.addresses(kNat.tap).empty());
  // libvirt writes MACs in lower case; the guard compares without case all the same.
  f.lease("default", "52:54:00:AB:CD:EF", "192.168.122.7", f.now() + 3600);
  f.guard.learn();
  EXPECT_EQ(f.guard.addresses(kNat.tap), std::vector{ip("192.168.122.7")});
  EXPECT_EQ(f.nft.last(),
            "flush set bridge bowline_abc addr_bwabc89abcdef00\nadd element bridge "
            "bowline_abc addr_bwabc89abcdef00 { 192.168.122.7 }\n");
  const auto after = f.nft.count();
  f.guard.learn();  // nothing new
  EXPECT_EQ(f.nft.count(), after);
}

TEST(GuestGuard, KeepsAnAddressWhoseLeaseRanOutUntilAnotherGuestIsLeasedIt) {
  Fixture f;
  f.guard.load({});
  f.guard.put("alice-nat", {kNat});
  f.lease("default", kNat.mac, "192.168.122.7", f.now() + 60);
  f.guard.learn();
  ASSERT_EQ(f.guard.addresses(kNat.tap), std::vector{ip("192.168.122.7")});
  // Suspended for two hours: its lease ran out, and it renews from the address it has.
  f.clock.advance(2 * 3600 * 1000);
  f.guard.learn();
  EXPECT_EQ(f.guard.addresses(kNat.tap), std::vector{ip("192.168.122.7")});
  // Meanwhile dnsmasq leased the address to someone else: it is theirs now.
  f.lease("default", "52:54:00:00:00:99", "192.168.122.7", f.now() + 3600);
  f.guard.learn();
  EXPECT_TRUE(f.guard.addresses(kNat.tap).empty());
  EXPECT_EQ(f.nft.last(), "flush set bridge bowline_abc addr_bwabc89abcdef00\n");
}

TEST(GuestGuard, ATableChangedBehindItsBackIsWrittenWhole) {
  Fixture f;
  f.guard.load({});
  f.guard.put("alice-dev", {kBridged});
  f.nft.fail_next = 1;  // someone flushed the ruleset: adding into the table fails
  f.guard.put("bob-nat", {kNat});
  ASSERT_GE(f.nft.count(), 2u);
  const auto rebuilt = f.nft.last();
  EXPECT_EQ(rebuilt.rfind("table bridge bowline_abc\ndelete table", 0), 0u);
  EXPECT_THAT(rebuilt, HasSubstr("out_bwabc0123456700"));
  EXPECT_THAT(rebuilt, HasSubstr("out_bwabc89abcdef00"));
  // When even that fails, the start fails with nft's words, and nothing is recorded.
  f.nft.fail_next = 2;
  auto third = kNat;
  third.tap = "bwabc1111111100";
  third.mac = "52:54:00:11:11:11";
  try {
    f.guard.put("carol-nat", {third});
    FAIL() << "a NIC without rules was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("nft: cannot write the guest guard's table: Error: No such "
                                    "file or directory"));
  }
  EXPECT_EQ(f.guard.domains().count("carol-nat"), 0u);
}

TEST(GuestGuard, KeepsItsRegistryAndABootScriptAndLoadsOnlyWhatLibvirtHas) {
  test_support::TempDir keep;
  {
    Fixture f;
    f.guard.load({});
    f.guard.put("alice-dev", {kBridged});
    f.guard.put("bob-nat", {kNat});
    f.lease("default", kNat.mac, "192.168.122.7", f.now() + 3600);
    f.guard.learn();
    const auto boot = test_support::read_file(f.dir.file("guest-guard.nft"));
    EXPECT_THAT(boot, HasSubstr("{ 198.51.100.20 }"));
    // Learnt addresses are not in it: at boot a NAT guest may only ask DHCP until the server
    // has read the leases again.
    EXPECT_THAT(boot, Not(HasSubstr("192.168.122.7")));
    std::filesystem::copy_file(f.dir.file("guest-guard.json"), keep.file("guest-guard.json"));
  }
  Fixture f;
  std::filesystem::copy_file(keep.file("guest-guard.json"), f.dir.file("guest-guard.json"));
  f.lease("default", kNat.mac, "192.168.122.7", f.now() + 3600);
  f.guard.load({"bob-nat"});  // alice-dev was undefined while the server was away
  const auto domains = f.guard.domains();
  ASSERT_EQ(domains.size(), 1u);
  EXPECT_EQ(domains.at("bob-nat"), std::vector{kNat});
  ASSERT_EQ(f.nft.count(), 1u);
  EXPECT_THAT(f.nft.last(), HasSubstr("addr_bwabc89abcdef00 { 192.168.122.7 }"));
  EXPECT_THAT(f.nft.last(), Not(HasSubstr("bwabc0123456700")));
}

TEST(GuestGuard, AnUnreadableRegistryIsAnErrorThatSaysWhatItMeans) {
  Fixture f;
  test_support::write_file(f.dir.file("guest-guard.json"),
                           "{\"domains\": {\"x\": [{\"tap\": 1}]}}");
  try {
    f.guard.load({"x"});
    FAIL() << "loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("guest-guard.json cannot be read"));
    EXPECT_THAT(e.what(), HasSubstr("reach nothing until they start again"));
  }
}

TEST(GuestGuard, LearnsAsSoonAsALeaseFileChanges) {
  // It reads the leases again only every 10 minutes unless a lease file changes, and the test
  // waits at most 30 s: learning in time means the change woke it.
  Fixture f(std::chrono::minutes(10));
  std::filesystem::create_directories(f.dir.path() / "leases");
  f.guard.load({});
  f.guard.put("alice-nat", {kNat});
  f.guard.watch_leases();
  f.lease("default", kNat.mac, "192.168.122.7", f.now() + 3600);
  test_support::write_file((f.dir.path() / "leases" / "virbr0.status").string(), "[]\n");
  {
    std::unique_lock lock(f.nft.mutex);
    f.nft.changed.wait_for(lock, std::chrono::seconds(30), [&] {
      return f.nft.scripts.back().find("192.168.122.7") != std::string::npos;
    });
  }
  EXPECT_EQ(f.guard.addresses(kNat.tap), std::vector{ip("192.168.122.7")});
  f.guard.stop();
}

// A guest that holds several leases (it asked again with other client ids) may send from one
// address: the lease that lasts longest, which is also the one bowline connects to.
TEST(security_guest_guard, OneAddressPerNicTheLeaseThatLastsLongest) {
  Fixture f;
  f.guard.load({});
  f.guard.put("alice-nat", {kNat});
  f.lease("default", kNat.mac, "192.168.122.7", f.now() + 600);
  f.lease("default", kNat.mac, "192.168.122.9", f.now() + 3600);
  f.lease("default", kNat.mac, "192.168.122.8", f.now() + 60);
  f.guard.learn();
  EXPECT_EQ(f.guard.addresses(kNat.tap), std::vector{ip("192.168.122.9")});
}

// `nft flush ruleset` (or a firewall service's reload) takes the table away: the next look puts
// it back whole and says so; a look at a whole table writes nothing.
TEST(security_guest_guard, AFlushedTableIsWrittenAgainAndTold) {
  Fixture f;
  std::vector<std::string> told;
  f.on_restored = [&](const std::string& why) { told.push_back(why); };
  f.guard.load({});
  f.guard.put("alice-dev", {kBridged});
  f.guard.put("bob-nat", {kNat});
  const auto written = f.nft.count();
  EXPECT_TRUE(f.guard.check_table());
  EXPECT_EQ(f.nft.count(), written) << "an intact table is left alone";
  EXPECT_TRUE(told.empty());
  f.nft.flush();
  EXPECT_TRUE(f.guard.check_table());
  ASSERT_EQ(f.nft.count(), written + 1);
  EXPECT_EQ(f.nft.last().rfind("table bridge bowline_abc\ndelete table", 0), 0u);
  EXPECT_THAT(f.nft.last(), HasSubstr("out_bwabc0123456700"));
  EXPECT_THAT(f.nft.last(), HasSubstr("out_bwabc89abcdef00"));
  ASSERT_EQ(told.size(), 1u);
  EXPECT_THAT(told[0], HasSubstr("table bridge bowline_abc is gone: written again"));
  // A NIC's chain deleted by hand: the table is written whole again too.
  {
    std::lock_guard lock(f.nft.mutex);
    f.nft.chains.erase("in_bwabc89abcdef00");
  }
  EXPECT_TRUE(f.guard.check_table());
  ASSERT_EQ(told.size(), 2u);
  EXPECT_THAT(told[1], HasSubstr("lacks its chain in_bwabc89abcdef00"));
}

// A start, resume or restore runs the domain only with its rules in place.
TEST(security_guest_guard, NoDomainRunsWithoutItsRules) {
  Fixture f;
  f.guard.load({});
  f.guard.put("alice-dev", {kBridged});
  EXPECT_NO_THROW(f.guard.ensure("alice-dev"));
  f.nft.flush();
  EXPECT_NO_THROW(f.guard.ensure("alice-dev")) << "put back, then it may run";
  EXPECT_THAT(f.nft.last(), HasSubstr("out_bwabc0123456700"));
  f.nft.flush();
  f.nft.fail_next = 1;  // and nft cannot write it now
  try {
    f.guard.ensure("alice-dev");
    FAIL() << "ran without its rules";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("the guest guard is not in place, so alice-dev does not run "
                                    "unguarded: nft: cannot write the guest guard's table"));
  }
  EXPECT_FALSE(f.guard.healthy());
  EXPECT_THROW(f.guard.ensure("nobody"), std::runtime_error);
}

// A guard that could not write its table at the server's start (nft failing) keeps the domains
// of its registry: their next start writes the table, or fails; it never runs them unguarded.
TEST(security_guest_guard, AFailedLoadLeavesNoStartUnguarded) {
  test_support::TempDir keep;
  {
    Fixture f;
    f.guard.load({});
    f.guard.put("alice-dev", {kBridged});
    std::filesystem::copy_file(f.dir.file("guest-guard.json"), keep.file("guest-guard.json"));
  }
  Fixture f;
  std::filesystem::copy_file(keep.file("guest-guard.json"), f.dir.file("guest-guard.json"));
  f.nft.fail_next = 1;
  EXPECT_THROW(f.guard.load({"alice-dev"}), std::runtime_error);
  EXPECT_FALSE(f.guard.healthy());
  f.nft.fail_next = 1;
  EXPECT_THROW(f.guard.put("alice-dev", {kBridged}), std::runtime_error)
      << "the same NICs again must not pass for guarded";
  f.guard.put("alice-dev", {kBridged});  // nft works again: written whole
  EXPECT_TRUE(f.guard.healthy());
  EXPECT_EQ(f.nft.last().rfind("table bridge bowline_abc\ndelete table", 0), 0u);
}

// The watcher looks at the table every poll: a flushed ruleset is undone within one.
TEST(security_guest_guard, TheWatcherPutsTheTableBackWithinAPoll) {
  Fixture f(std::chrono::milliseconds(100));
  f.guard.load({});
  f.guard.put("alice-dev", {kBridged});
  f.guard.watch_leases();
  const auto before = f.nft.count();
  f.nft.flush();
  {
    std::unique_lock lock(f.nft.mutex);
    EXPECT_TRUE(f.nft.changed.wait_for(lock, std::chrono::seconds(5), [&] {
      return f.nft.table && f.nft.scripts.size() > before;
    })) << "the table was not put back";
  }
  f.guard.stop();
}

}  // namespace
}  // namespace bowline::engine

namespace bowline::engine {
namespace {

class ListingNft final : public util::ProcessRunner {
 public:
  std::string tables;
  int calls = 0;
  util::ProcessResult run(const std::vector<std::string>& argv,
                          std::chrono::milliseconds) override {
    ++calls;
    EXPECT_EQ(argv, (std::vector<std::string>{"nft", "list", "tables", "bridge"}));
    return {0, tables, "", false};
  }
};

TEST(GuardTag, ChosenOnceAsOneNoOtherServerHasThenKeptWithTheData) {
  test_support::TempDir dir;
  ListingNft nft;
  // Every tag but one is taken by another server's table: the one left is chosen.
  nft.tables = "table bridge nat\n";
  for (unsigned t = 1; t <= 0xfff; ++t) {
    char text[40];
    std::snprintf(text, sizeof text, "table bridge bowline_%03x\n", t);
    if (t != 0x5e7) nft.tables += text;
  }
  const auto tag = guard_tag_in(dir.path(), nft);
  EXPECT_EQ(tag, "5e7");
  EXPECT_EQ(test_support::read_file(dir.file("guest-guard.tag")), tag + "\n");
  // The data directory moved, another server came: the tag stays, nft is not asked again.
  nft.tables.clear();
  EXPECT_EQ(guard_tag_in(dir.path(), nft), tag);
  EXPECT_EQ(nft.calls, 1);
  test_support::write_file(dir.file("guest-guard.tag"), "x\"; flush ruleset\n");
  EXPECT_THROW(guard_tag_in(dir.path(), nft), std::invalid_argument);
}

}  // namespace
}  // namespace bowline::engine
