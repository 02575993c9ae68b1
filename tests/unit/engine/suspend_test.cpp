// Suspend and resume through the engine on libvirt's test driver, which keeps a
// managed save's flag as the QEMU driver keeps its file (the memory itself is proven on the
// Debian guest in e2e.debian_state), with a real SQLite file and real qcow2 files; and the idle
// watch's rule on its own. Suites are lowercase so that `ctest -R suspend` runs them.
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "engine/event_kinds.hpp"
#include "engine/idle_watch.hpp"
#include "engine_fixture.hpp"

namespace bowline::engine {
namespace {

namespace fs = std::filesystem;
using store::SpaceState;
using namespace std::chrono_literals;

class suspend : public fixture::EngineFixture {
 protected:
  std::string running_space(const std::string& yaml = "image: tiny\n",
                            const std::string& name = "dev") {
    const auto made = create(add_template(yaml), name);
    EXPECT_EQ(space(made.space.id).state, SpaceState::Running) << space(made.space.id).error;
    return made.space.id;
  }

  bool saved(const std::string& id) { return hypervisor_->has_managed_save(space(id).domain_name); }

  std::vector<store::Event> events_of(const std::string& id, std::string_view kind) {
    std::vector<store::Event> out;
    for (auto& e : store_->events().events_since(0, 100000))
      if (e.space_id && *e.space_id == id && e.kind == kind) out.push_back(std::move(e));
    return out;
  }

  // One stats round `after` the last, then the idle look: what the sampler's thread does.
  void round(std::chrono::seconds after) {
    timer_.advance(after);
    engine_->stats().sample();
    engine_->suspend_idle();
    engine_->wait_idle();
  }
};

TEST_F(suspend, ASuspendSavesTheMachineAndAStartResumesIt) {
  const auto id = running_space();
  engine_->suspend_space(id, "asked by alice");
  engine_->wait_idle();
  auto s = space(id);
  ASSERT_EQ(s.state, SpaceState::Suspended) << s.error;
  EXPECT_EQ(s.suspend_reason, "asked by alice");
  EXPECT_GT(s.suspended_at, 0);
  EXPECT_EQ(s.desired_state, store::DesiredState::Running);
  EXPECT_TRUE(saved(id));
  EXPECT_EQ(hypervisor_->state(s.domain_name).state, libvirt::DomainState::Shutoff);
  ASSERT_EQ(events_of(id, event::kSpaceSuspended.name).size(), 1u);
  EXPECT_EQ(events_of(id, event::kSpaceSuspended.name)[0].payload["reason"], "asked by alice");
  // What the node reports wins in a drift check: still suspended, not "stopped".
  engine_->audit();
  engine_->wait_idle();
  EXPECT_EQ(space(id).state, SpaceState::Suspended);

  engine_->start_space(id);
  engine_->wait_idle();
  s = space(id);
  EXPECT_EQ(s.state, SpaceState::Running) << s.error;
  EXPECT_FALSE(saved(id));
  const auto resumed = events_of(id, event::kSpaceResumed.name);
  ASSERT_EQ(resumed.size(), 1u);
  EXPECT_EQ(resumed[0].payload["reason"], "start");
  EXPECT_TRUE(resumed[0].payload["seconds"].is_number());
}

// Pool members: once ready (cloud-init's line in the console log), each waits suspended; a
// claim resumes the one it takes. With server.pools.wait=running, members stay booted.
class suspend_pool : public suspend {
 protected:
  store::Space member(std::int64_t pool) {
    const auto members = store_->spaces().list_for_pool(pool);
    EXPECT_EQ(members.size(), 1u);
    return members.empty() ? store::Space{} : members.front();
  }
  void cloud_init_finishes(const store::Space& m) {
    const auto log = plan::console_log_of(plan::space_dir(images_.string(), m.domain_name));
    fs::create_directories(fs::path(log).parent_path());
    std::ofstream(log) << "Cloud-init v. 22.4.2 finished at Sun, 06 Dec 2026 20:50:19 +0000. "
                          "Datasource DataSourceNoCloud.  Up 132.43 seconds\n";
  }
  // Pools take NAT templates (the fixture's add_template is bridged).
  std::string nat_template() {
    const auto name = "nat" + suffix_;
    store_->templates().create(name, "name: ${{ .space.name }}-" + suffix_ +
                                         "\nmemory: 256M\nimage: tiny\nnetwork:\n  mode: nat\n"
                                         "  bridge: default\n");
    return name;
  }
};

TEST_F(suspend_pool, AReadyMemberWaitsSuspendedAndAClaimResumesIt) {
  const auto pool = engine_->create_pool("p" + suffix_, nat_template(), 1);
  engine_->wait_idle();
  auto m = member(pool.id);
  ASSERT_EQ(m.state, SpaceState::Running) << m.error;
  round(1s);  // booting: it waits for cloud-init
  EXPECT_EQ(space(m.id).state, SpaceState::Running);
  cloud_init_finishes(m);
  round(1s);
  m = space(m.id);
  ASSERT_EQ(m.state, SpaceState::Suspended) << m.error;
  EXPECT_EQ(m.suspend_reason, "ready: waits for its claim suspended");
  EXPECT_TRUE(saved(m.id));
  // The test driver has no guest agent: resumed, then restarted into alice's seed.
  const auto claimed = engine_->claim(pool.name, alice_, "mine");
  engine_->wait_idle();
  EXPECT_EQ(claimed.space.id, m.id);
  EXPECT_EQ(events_of(m.id, event::kSpaceResumed.name).size(), 1u);
  EXPECT_EQ(space(m.id).state, SpaceState::Running) << space(m.id).error;
  EXPECT_EQ(space(m.id).owner_id, alice_);
}

TEST_F(suspend_pool, WithPoolsWaitRunningMembersStayBooted) {
  pools_wait_suspended_ = false;
  start_engine();
  const auto pool = engine_->create_pool("p" + suffix_, nat_template(), 1);
  engine_->wait_idle();
  const auto m = member(pool.id);
  cloud_init_finishes(m);
  round(1s);
  EXPECT_EQ(space(m.id).state, SpaceState::Running);
  EXPECT_FALSE(saved(m.id));
}

TEST_F(suspend, AStopDiscardsTheSavedStateSoTheNextStartBoots) {
  const auto id = running_space();
  engine_->suspend_space(id, "test");
  engine_->wait_idle();
  ASSERT_TRUE(saved(id));
  engine_->stop_space(id);
  engine_->wait_idle();
  EXPECT_EQ(space(id).state, SpaceState::Stopped) << space(id).error;
  EXPECT_FALSE(saved(id));
  engine_->start_space(id);
  engine_->wait_idle();
  EXPECT_EQ(space(id).state, SpaceState::Running) << space(id).error;
  EXPECT_TRUE(events_of(id, event::kSpaceResumed.name).empty());
}

TEST_F(suspend, ADeleteOfASuspendedSpaceLeavesNothing) {
  const auto id = running_space();
  const auto domain = space(id).domain_name;
  engine_->suspend_space(id, "test");
  engine_->wait_idle();
  engine_->delete_space(id);
  engine_->wait_idle();
  EXPECT_FALSE(store_->spaces().get(id));
  EXPECT_FALSE(hypervisor_->lookup(domain));
  EXPECT_FALSE(fs::exists(plan::space_dir(images_.string(), domain)));
}

TEST_F(suspend, OnlyARunningSpaceIsSuspendedAndASuspendedOneIsNotSnapshotted) {
  const auto stopped = create(add_template("image: tiny\n"), "off", false).space.id;
  auto why = message_of([&] { engine_->suspend_space(stopped, "x"); }, EngineError::Kind::Conflict);
  EXPECT_NE(why.find("only a running space can be suspended"), std::string::npos) << why;
  const auto id = running_space("image: tiny\n", "on");
  engine_->suspend_space(id, "x");
  engine_->wait_idle();
  why = message_of([&] { engine_->snapshot_space(id, "s1", false); }, EngineError::Kind::Conflict);
  EXPECT_NE(why.find("suspended"), std::string::npos) << why;
  why = message_of([&] { engine_->suspend_space(id, "again"); }, EngineError::Kind::Conflict);
  EXPECT_NE(why.find("is suspended"), std::string::npos) << why;
}

TEST_F(suspend, WakeResumesBeforeItReturnsAndDoesNothingToARunningSpace) {
  const auto id = running_space();
  engine_->wake(id, "console");  // running: nothing to do
  EXPECT_TRUE(events_of(id, event::kSpaceResumed.name).empty());
  engine_->suspend_space(id, "test");
  engine_->wait_idle();
  engine_->wake(id, "tunnel to port 22");
  EXPECT_EQ(space(id).state, SpaceState::Running) << space(id).error;
  const auto resumed = events_of(id, event::kSpaceResumed.name);
  ASSERT_EQ(resumed.size(), 1u);
  EXPECT_EQ(resumed[0].payload["reason"], "tunnel to port 22");
}

TEST_F(suspend, AnIdleSpaceIsSuspendedAfterItsLimitAndAHeldOrBusyOneIsNot) {
  const auto idle = running_space("image: tiny\nidleSuspend: 10s\n", "idle");
  const auto held = running_space("image: tiny\nidleSuspend: 10s\n", "held");
  const auto never = running_space("image: tiny\nidleSuspend: \"off\"\n", "never");
  auto handle = engine_->hold(held);
  round(1s);  // the counters' baseline: no rates yet, so busy (idle from here on)
  round(5s);  // the first rates: 5s idle (the held one is busy)
  EXPECT_EQ(space(idle).state, SpaceState::Running) << "suspended before its 10s";
  round(6s);  // 11s idle
  EXPECT_EQ(space(idle).state, SpaceState::Suspended) << space(idle).error;
  EXPECT_EQ(space(idle).suspend_reason, "idle for 10s");
  EXPECT_EQ(space(held).state, SpaceState::Running);
  EXPECT_EQ(space(never).state, SpaceState::Running);
  // Once let go, the held one's idle time starts then.
  handle.reset();
  round(6s);
  EXPECT_EQ(space(held).state, SpaceState::Running);
  round(6s);
  EXPECT_EQ(space(held).state, SpaceState::Suspended) << space(held).error;
  EXPECT_EQ(space(never).state, SpaceState::Running);
}

TEST_F(suspend, AGuestThatUsesItsCpuIsNotIdle) {
  const auto id = running_space("image: tiny\nidleSuspend: 10s\n");
  round(1s);
  for (int i = 0; i < 4; ++i) {
    hypervisor_->cpu_ns += 3'000'000'000ull;  // 3s of CPU in each 6s: 50% of one vCPU
    round(6s);
    EXPECT_EQ(space(id).state, SpaceState::Running) << "round " << i;
  }
  round(6s);  // quiet from here on: 6s idle
  EXPECT_EQ(space(id).state, SpaceState::Running);
  round(6s);  // 12s idle
  EXPECT_EQ(space(id).state, SpaceState::Suspended) << space(id).error;
}

TEST_F(suspend, DescribeShowsTheLimitAndHowLongItHasBeenIdle) {
  const auto id = running_space("image: tiny\nidleSuspend: 30m\n");
  round(1s);
  round(5s);
  round(60s);
  const auto view = engine_->describe(id);
  EXPECT_EQ(view.idle_after, 30min);
  ASSERT_TRUE(view.idle_for);
  EXPECT_GE(view.idle_for->count(), 60);
}

TEST(suspend_idle_watch, BusyWhileHeldTouchedOrAboveTheThresholdAndForgetsWhatStopped) {
  util::ManualTimer timer;
  IdleWatch watch(timer);
  const auto c = [](const std::string& id, std::optional<double> cpu) {
    return IdleCandidate{id, 10s, cpu};
  };
  EXPECT_TRUE(watch.due({c("a", 1), c("b", 50), c("u", std::nullopt)}, 5).empty());  // first sight
  timer.advance(11s);
  // a is idle for 11s; b is busy; u's CPU is unknown (busy).
  EXPECT_EQ(watch.due({c("a", 1), c("b", 50), c("u", std::nullopt)}, 5),
            std::vector<std::string>{"a"});
  timer.advance(5s);
  watch.touch("b");
  auto hold = watch.hold("u");
  EXPECT_EQ(watch.holders("u"), 1);
  timer.advance(11s);
  // a starts afresh after it was due; b's idle time counts from its touch; u is held.
  EXPECT_EQ(watch.due({c("a", 1), c("b", 1), c("u", 0)}, 5), (std::vector<std::string>{"a", "b"}));
  hold.reset();
  EXPECT_EQ(watch.holders("u"), 0);
  timer.advance(11s);
  EXPECT_EQ(watch.due({c("a", 1), c("b", 1), c("u", 0)}, 5),
            (std::vector<std::string>{"a", "b", "u"}));
  // A space that left the running set starts afresh when it comes back.
  EXPECT_TRUE(watch.due({}, 5).empty());
  timer.advance(11s);
  EXPECT_TRUE(watch.due({c("a", 0)}, 5).empty());
  EXPECT_FALSE(watch.idle_since("gone"));
}

}  // namespace
}  // namespace bowline::engine

namespace bowline::engine {
namespace {

class suspend_unfollowed : public fixture::EngineFixture {};

// A server killed during a suspend: libvirt finishes the save after the next server settled the
// space as running. The save's stop event makes it suspended (as libvirt has it), not stopped,
// and runStrategy Always does not boot it afresh over its saved memory.
TEST_F(suspend_unfollowed, ASaveThatEndsAfterTheServerLookedAwayShowsTheSpaceSuspended) {
  const auto id = create(add_template("image: tiny\n"), "late").space.id;
  ASSERT_EQ(space(id).state, store::SpaceState::Running) << space(id).error;
  hypervisor_->managed_save(space(id).domain_name);  // the save the killed server asked for
  for (int i = 0; i < 100 && space(id).state != store::SpaceState::Suspended; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    engine_->wait_idle();
  }
  EXPECT_EQ(space(id).state, store::SpaceState::Suspended);
  EXPECT_TRUE(hypervisor_->has_managed_save(space(id).domain_name));
}

}  // namespace
}  // namespace bowline::engine
