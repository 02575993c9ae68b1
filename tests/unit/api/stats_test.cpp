// What each space uses, through the API: GET /api/v1/spaces/{id}/stats (its owner and admins;
// everyone else a 404), the "stats" of running spaces in the list and a single GET, and the
// bowline_space_* series of /metrics read by the Prometheus client's own text parser (Debian's
// python3-prometheus-client). The test driver reports no counters: a wrapper adds them, and a
// ManualTimer moves the time between the sampler's rounds, which the tests run themselves.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "../common/scratch_files.hpp"
#include "../engine/forwarding_hypervisor.hpp"
#include "api_test_support.hpp"
#include "util/timer.hpp"

namespace bowline::api {
namespace {

using namespace testing;

// Every running domain of the test driver, with counters that grow with the test's time (so
// whatever rounds the sampler's own thread makes): half a CPU (one vCPU), 100,000 bytes read
// a second in 25 requests, 100 bytes received.
class CountingStats final : public engine::ForwardingHypervisor {
 public:
  CountingStats(libvirt::Hypervisor& inner, const util::Timer& timer)
      : ForwardingHypervisor(inner), timer_(timer), start_(timer.now()) {}
  std::vector<libvirt::DomainStats> all_domain_stats() override {
    auto all = ForwardingHypervisor::all_domain_stats();
    const auto ms = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(timer_.now() - start_).count());
    for (auto& s : all) {
      s.cpu_time_ns = ms * 500'000;
      s.vcpus = 1;
      s.balloon_current_kib = 262'144;
      s.balloon_available_kib = 250'000;
      s.balloon_unused_kib = 150'000;
      s.balloon_disk_caches_kib = 50'000;
      s.balloon_rss_kib = 200'000;
      s.disks = {{"vda", ms * 100, ms * 50, ms / 40, ms / 80}};
      s.nics = {{"vnet0", ms / 10, ms / 20}};
    }
    return all;
  }

 private:
  const util::Timer& timer_;
  const util::Timer::TimePoint start_;
};

engine::EngineSettings engine_settings(util::Timer& timer, std::chrono::seconds interval) {
  engine::EngineSettings settings;
  settings.timer = &timer;
  // The thread's baseline round runs at start, before any space; the next is 10 minutes
  // of the test's time away (a ring of 6 points).
  settings.stats.interval = interval;
  return settings;
}

class StatsApi : public ::testing::Test {
 protected:
  explicit StatsApi(std::chrono::seconds interval = std::chrono::seconds(600))
      : stack_(ApiStack::test_http_options(), engine_settings(timer_, interval),
               [this](libvirt::Hypervisor& inner) {
                 return std::make_unique<CountingStats>(inner, timer_);
               }) {
    const auto r = client_.post("/api/v1/templates", stack_.admin_token(),
                                {{"name", "dev"}, {"yaml", bridged_template()}});
    EXPECT_EQ(r.status, 201) << r.body;
  }

  std::string create(const std::string& token, const std::string& name, bool start = true) {
    const auto r = client_.post("/api/v1/spaces", token,
                                {{"template", "dev"}, {"name", name}, {"start", start}});
    EXPECT_EQ(r.status, 202) << r.body;
    stack_.wait_operation(r.parsed()["operation"]["id"], token);
    return r.parsed()["space"]["id"];
  }

  // Two rounds 10 s apart: rates from the second.
  void two_rounds() {
    stack_.engine().stats().sample();
    timer_.advance(std::chrono::seconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the points' wall-clock times
    stack_.engine().stats().sample();
  }

  util::ManualTimer timer_;  // before the stack, which waits with it
  ApiStack stack_;
  HttpClient client_{stack_.port()};
};

TEST_F(StatsApi, stats_TheOwnerAndAdminsSeeThemOthersGet404) {
  const auto alice = stack_.make_user(unique("alice"));
  const auto bob = stack_.make_user(unique("bob"));
  const auto id = create(alice, "box");
  two_rounds();
  EXPECT_EQ(client_.get("/api/v1/spaces/" + id + "/stats", alice).status, 200);
  EXPECT_EQ(client_.get("/api/v1/spaces/" + id + "/stats", stack_.admin_token()).status, 200);
  const auto other = client_.get("/api/v1/spaces/" + id + "/stats", bob);
  EXPECT_EQ(other.status, 404) << "another user's space is not there for bob";
  EXPECT_EQ(other.parsed()["error"], "no space with id " + id);
  EXPECT_EQ(client_.get("/api/v1/spaces/nope/stats", alice).status, 404);
  EXPECT_EQ(client_.get("/api/v1/spaces/" + id + "/stats", "").status, 401);
}

TEST_F(StatsApi, stats_CurrentFiguresCountersAndHistory) {
  const auto alice = stack_.make_user(unique("alice"));
  const auto id = create(alice, "box");
  two_rounds();
  const auto r = client_.get("/api/v1/spaces/" + id + "/stats", alice);
  ASSERT_EQ(r.status, 200) << r.body;
  const auto body = r.parsed();
  EXPECT_EQ(body["space"], id);
  EXPECT_EQ(body["node"], "local");
  EXPECT_EQ(body["enabled"], true);
  EXPECT_EQ(body["intervalSeconds"], 600);
  EXPECT_EQ(body["running"], true);
  EXPECT_TRUE(body["reason"].is_null()) << body.dump();
  const auto& now = body["current"];
  EXPECT_EQ(now["cpuPercent"], 50.0);  // 5 s of CPU in 10 s
  EXPECT_EQ(now["vcpus"], 1);
  EXPECT_EQ(now["memoryAvailableBytes"], 250'000 * 1024);
  EXPECT_EQ(now["memoryUsedBytes"], 50'000 * 1024);  // available - free - page cache
  EXPECT_EQ(now["memoryRssBytes"], 200'000 * 1024);
  EXPECT_EQ(now["diskReadBytesPerSecond"], 100'000);
  EXPECT_EQ(now["diskWriteBytesPerSecond"], 50'000);
  EXPECT_EQ(now["diskReadsPerSecond"], 25.0);
  EXPECT_EQ(now["diskWritesPerSecond"], 12.5);
  EXPECT_EQ(now["networkReceiveBytesPerSecond"], 100);
  EXPECT_EQ(now["networkTransmitBytesPerSecond"], 50);
  EXPECT_EQ(body["totals"]["cpuSeconds"], 5.0);
  EXPECT_EQ(body["totals"]["diskReadBytes"], 1'000'000);
  EXPECT_EQ(body["totals"]["diskWrites"], 125);
  EXPECT_EQ(body["totals"]["networkReceiveBytes"], 1000);
  const auto& history = body["history"];
  ASSERT_EQ(history["time"].size(), 2u) << body.dump();
  for (const auto& [key, column] : history.items())
    EXPECT_EQ(column.size(), 2u) << key << ": one array per figure, as long as time";
  EXPECT_TRUE(history["cpuPercent"][0].is_null()) << "no rate from the first sample";
  EXPECT_EQ(history["cpuPercent"][1], 50.0);
  // ?since: only newer points; a bad one is refused.
  const auto first = history["time"][0].get<std::int64_t>();
  const auto newer =
      client_.get("/api/v1/spaces/" + id + "/stats?since=" + std::to_string(first), alice);
  EXPECT_EQ(newer.parsed()["history"]["time"].size(), 1u) << newer.body;
  EXPECT_EQ(client_.get("/api/v1/spaces/" + id + "/stats?since=yesterday", alice).status, 422);
}

TEST_F(StatsApi, stats_AStoppedSpaceSaysWhy) {
  const auto alice = stack_.make_user(unique("alice"));
  const auto id = create(alice, "off", false);
  two_rounds();
  const auto body = client_.get("/api/v1/spaces/" + id + "/stats", alice).parsed();
  EXPECT_EQ(body["running"], false);
  EXPECT_TRUE(body["current"].is_null());
  EXPECT_EQ(body["reason"], "the space is not running");
  EXPECT_TRUE(body["history"]["time"].empty());
}

TEST_F(StatsApi, stats_TheListAndASingleGetCarryTheLatestFigures) {
  const auto alice = stack_.make_user(unique("alice"));
  const auto on = create(alice, "on");
  const auto off = create(alice, "off", false);
  two_rounds();
  std::map<std::string, nlohmann::json> listed;
  for (const auto& s : client_.get("/api/v1/spaces", alice).parsed()) listed[s["id"]] = s;
  ASSERT_TRUE(listed[on].contains("stats")) << listed[on].dump();
  EXPECT_EQ(listed[on]["stats"]["cpuPercent"], 50.0);
  EXPECT_EQ(listed[on]["stats"]["memoryUsedBytes"], 50'000 * 1024);
  EXPECT_FALSE(listed[off].contains("stats")) << "a stopped space has no figures";
  const auto one = client_.get("/api/v1/spaces/" + on, alice).parsed();
  EXPECT_EQ(one["stats"], listed[on]["stats"]);
  EXPECT_FALSE(client_.get("/api/v1/spaces/" + off, alice).parsed().contains("stats"));
  // The admin's list of everyone (cached whole) follows each new round.
  const auto at = [&] {
    for (const auto& s : client_.get("/api/v1/spaces?all=1", stack_.admin_token()).parsed())
      if (s["id"] == on) return s["stats"]["time"].get<std::int64_t>();
    return std::int64_t{0};
  };
  const auto before = at();
  EXPECT_EQ(before, one["stats"]["time"]);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the wall clock moves on too
  timer_.advance(std::chrono::seconds(10));
  stack_.engine().stats().sample();
  EXPECT_GT(at(), before);
}

// /metrics parsed by prometheus_client: its families by name.
std::map<std::string, nlohmann::json> parse_metrics(const std::string& text) {
  test_support::TempDir dir;
  test_support::write_file(dir.file("metrics.txt"), text);
  util::SystemProcessRunner runner;
  // Debian's python3, where python3-prometheus-client is (scripts/setup installs it).
  const auto result =
      runner.run({"/usr/bin/python3", test_support::source_path("tests/unit/api/parse_metrics.py"),
                  dir.file("metrics.txt")},
                 std::chrono::seconds(60));
  EXPECT_EQ(result.exit_code, 0) << result.err << "\n" << text;
  std::map<std::string, nlohmann::json> out;
  if (result.exit_code == 0)
    for (const auto& family : nlohmann::json::parse(result.out)) out[family["name"]] = family;
  return out;
}

TEST_F(StatsApi, metrics_OneSeriesPerRunningSpaceWithItsLabels) {
  const auto alice_name = unique("alice");
  const auto bob_name = unique("bob");
  const auto alice = stack_.make_user(alice_name);
  const auto bob = stack_.make_user(bob_name);
  create(alice, "one");
  create(alice, "two");
  create(bob, "three");
  create(alice, "stopped", false);
  two_rounds();
  const auto r = client_.get("/metrics", stack_.admin_token());
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  const auto families = parse_metrics(r.body);
  ASSERT_FALSE(families.empty());
  // The test driver's other tests leave running domains of their own behind: only these
  // users' spaces are counted here.
  const std::set<std::string> ours{alice_name, bob_name};
  const std::map<std::string, std::string> expected{
      {"bowline_space_cpu_seconds", "counter"},
      {"bowline_space_vcpus", "gauge"},
      {"bowline_space_memory_used_bytes", "gauge"},
      {"bowline_space_memory_available_bytes", "gauge"},
      {"bowline_space_memory_rss_bytes", "gauge"},
      {"bowline_space_disk_read_bytes", "counter"},
      {"bowline_space_disk_written_bytes", "counter"},
      {"bowline_space_disk_reads", "counter"},
      {"bowline_space_disk_writes", "counter"},
      {"bowline_space_network_receive_bytes", "counter"},
      {"bowline_space_network_transmit_bytes", "counter"},
  };
  for (const auto& [name, type] : expected) {
    ASSERT_TRUE(families.count(name)) << name << " is missing:\n" << r.body;
    const auto& family = families.at(name);
    EXPECT_EQ(family["type"], type) << name;
    std::multiset<std::string> spaces;
    for (const auto& sample : family["samples"]) {
      if (!ours.count(sample["labels"].value("owner", ""))) continue;
      EXPECT_EQ(sample["name"], type == "counter" ? name + "_total" : name);
      EXPECT_EQ(sample["labels"]["node"], "local");
      EXPECT_EQ(sample["labels"].size(), 3u) << sample.dump();
      spaces.insert(sample["labels"]["owner"].get<std::string>() + "/" +
                    sample["labels"]["space"].get<std::string>());
    }
    EXPECT_EQ(spaces, (std::multiset<std::string>{alice_name + "/one", alice_name + "/two",
                                                  bob_name + "/three"}))
        << name << ": one series per running space";
  }
  for (const auto& sample : families.at("bowline_space_cpu_seconds")["samples"])
    if (ours.count(sample["labels"].value("owner", ""))) {
      EXPECT_EQ(sample["value"], 5.0);
    }
  EXPECT_GE(families.at("bowline_stats_rounds")["samples"][0]["value"].get<double>(), 2.0);
  EXPECT_EQ(families.at("bowline_stats_spaces")["type"], "gauge");

  // A user's scrape has their own spaces only.
  const auto own = parse_metrics(client_.get("/metrics", bob).body);
  const auto& samples = own.at("bowline_space_cpu_seconds")["samples"];
  ASSERT_EQ(samples.size(), 1u) << samples.dump();
  EXPECT_EQ(samples[0]["labels"]["space"], "three");
}

TEST_F(StatsApi, metrics_LabelValuesAreEscaped) {
  engine::SpaceStats s;
  s.space_name = "a\"b\\c";
  s.owner = "line\nbreak";
  s.node = "local";
  s.running = true;
  s.totals.cpu_ns = 1'500'000'000;
  s.latest = engine::StatsPoint{};
  const auto families = parse_metrics(space_metrics_text({s}, {}));
  const auto& sample = families.at("bowline_space_cpu_seconds")["samples"][0];
  EXPECT_EQ(sample["labels"]["space"], "a\"b\\c");
  EXPECT_EQ(sample["labels"]["owner"], "line\nbreak");
  EXPECT_EQ(sample["value"], 1.5);
  EXPECT_TRUE(families.at("bowline_space_memory_used_bytes")["samples"].empty())
      << "an unknown figure has no series";
}

class StatsOff : public StatsApi {
 protected:
  StatsOff() : StatsApi(std::chrono::seconds(0)) {}
};

TEST_F(StatsOff, stats_OffSaysSo) {
  const auto alice = stack_.make_user(unique("alice"));
  const auto id = create(alice, "box");
  const auto body = client_.get("/api/v1/spaces/" + id + "/stats", alice).parsed();
  EXPECT_EQ(body["enabled"], false);
  EXPECT_EQ(body["reason"], "statistics are off on this server (server.stats.interval 0)");
  EXPECT_TRUE(body["current"].is_null());
}

}  // namespace
}  // namespace bowline::api
