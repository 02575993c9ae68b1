// Lifecycle events through LibvirtHypervisor::subscribe on libvirt's test driver: delivery in
// order, several subscribers, unsubscribing (also from inside a callback), callbacks that call
// back into the hypervisor or throw, and subscriptions that survive a reconnect.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libvirt/libvirt.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "hypervisor_test_support.hpp"
#include "libvirt/libvirt_hypervisor.hpp"

namespace bowline::libvirt {
namespace {

using namespace hvtest;
using namespace std::chrono_literals;
using ::testing::ElementsAre;

TEST(HypervisorEvents, SubscriberSeesTheWholeLifecycleInOrder) {
  LibvirtHypervisor hv({.uri = node_uri()});
  EventRecorder recorder("life");
  const auto subscription = hv.subscribe(recorder.callback());

  hv.define(test_domain_xml("life", kUuid));
  hv.start("life");
  ASSERT_TRUE(recorder.wait_for(LifecycleEventType::Started));
  hv.destroy("life");
  ASSERT_TRUE(recorder.wait_for(LifecycleEventType::Stopped));
  hv.undefine("life");
  ASSERT_TRUE(recorder.wait_for(LifecycleEventType::Undefined));

  EXPECT_THAT(recorder.descriptions(), ElementsAre("defined (added)", "started (booted)",
                                                   "stopped (destroyed)", "undefined (removed)"));
  const auto events = recorder.events();
  EXPECT_EQ(events[1].uuid, kUuid);
  EXPECT_EQ(state_after(events[0]), std::nullopt);
  EXPECT_EQ(state_after(events[1]), DomainState::Running);
  EXPECT_EQ(state_after(events[2]), DomainState::Shutoff);
  EXPECT_FALSE(is_crash(events[2])) << "destroyed is someone's stop, not a crash";
}

TEST(HypervisorEvents, EverySubscriberGetsEventsUntilItUnsubscribes) {
  LibvirtHypervisor hv({.uri = node_uri()});
  EventRecorder first("two"), second("two");
  auto a = hv.subscribe(first.callback());
  auto b = hv.subscribe(second.callback());

  hv.define(test_domain_xml("two", kUuid));
  ASSERT_TRUE(first.wait_for(LifecycleEventType::Defined));
  ASSERT_TRUE(second.wait_for(LifecycleEventType::Defined));

  b.reset();
  EXPECT_FALSE(b);
  hv.start("two");
  ASSERT_TRUE(first.wait_for(LifecycleEventType::Started));
  EXPECT_FALSE(second.wait_for(LifecycleEventType::Started, 300ms)) << "unsubscribed";

  // A moved subscription still delivers; destroying the moved-from one does nothing.
  Subscription moved = std::move(a);
  EXPECT_TRUE(moved);
  hv.destroy("two");
  ASSERT_TRUE(first.wait_for(LifecycleEventType::Stopped));
}

TEST(HypervisorEvents, CallbacksMayCallBackUnsubscribeThemselvesAndThrow) {
  LibvirtHypervisor hv({.uri = node_uri()});
  hv.define(test_domain_xml("cb", kUuid));

  // Reads the state from inside the callback (the event thread) without deadlocking.
  std::atomic<int> state_seen{-1};
  auto reader = hv.subscribe([&](const LifecycleEvent& e) {
    if (e.domain == "cb" && e.type == LifecycleEventType::Started)
      state_seen = static_cast<int>(hv.state("cb").state);
  });
  // Throws on every event: the others still get theirs.
  auto thrower = hv.subscribe([](const LifecycleEvent&) { throw std::runtime_error("boom"); });
  // Unsubscribes itself on its first event.
  std::atomic<int> once_calls{0};
  Subscription once;
  std::mutex once_mutex;
  {
    std::lock_guard lock(once_mutex);
    once = hv.subscribe([&](const LifecycleEvent&) {
      ++once_calls;
      std::lock_guard inner(once_mutex);
      once.reset();
    });
  }
  EventRecorder recorder("cb");
  auto recording = hv.subscribe(recorder.callback());

  hv.start("cb");
  ASSERT_TRUE(recorder.wait_for(LifecycleEventType::Started));
  hv.destroy("cb");
  ASSERT_TRUE(recorder.wait_for(LifecycleEventType::Stopped));
  EXPECT_EQ(state_seen.load(), static_cast<int>(DomainState::Running));
  EXPECT_EQ(once_calls.load(), 1);
}

TEST(HypervisorEvents, SubscriptionsSurviveAReconnect) {
  // test:///default keeps its state across connections within the process.
  LibvirtHypervisor hv({.uri = kDefaultUri});
  const std::string name = "reconnect-" + std::to_string(::getpid());
  EventRecorder recorder(name);
  const auto subscription = hv.subscribe(recorder.callback());
  hv.define(test_domain_xml(name, "7a1c3d2e-0a4b-4c5d-8e9f-101112131415"));
  ASSERT_TRUE(recorder.wait_for(LifecycleEventType::Defined));

  hv.reconnect();
  EXPECT_EQ(hv.connection_count(), 2u);
  ASSERT_TRUE(hv.lookup(name)) << "same host after the reconnect";
  hv.start(name);
  ASSERT_TRUE(recorder.wait_for(LifecycleEventType::Started));
  hv.destroy(name);
  hv.undefine(name);
  ASSERT_TRUE(recorder.wait_for(LifecycleEventType::Undefined));
  // Exactly one callback per event: the old connection's registration is gone.
  EXPECT_EQ(recorder.events().size(), 4u);
}

TEST(HypervisorEvents, SubscriptionOutlivingTheHypervisorIsHarmless) {
  Subscription subscription;
  {
    LibvirtHypervisor hv({.uri = node_uri()});
    subscription = hv.subscribe([](const LifecycleEvent&) {});
  }
  subscription.reset();
  SUCCEED();
}

TEST(HypervisorEvents, DescribeAndStates) {
  LifecycleEvent crash{"d", "", LifecycleEventType::Stopped, VIR_DOMAIN_EVENT_STOPPED_CRASHED};
  EXPECT_EQ(describe(crash), "stopped (crashed)");
  EXPECT_TRUE(is_crash(crash));
  EXPECT_TRUE(is_crash({"d", "", LifecycleEventType::Crashed, 0}));
  EXPECT_EQ(describe({"d", "", LifecycleEventType::Shutdown, 1}), "shutdown (by the guest)");
  EXPECT_EQ(describe({"d", "", LifecycleEventType::Started, 99}), "started (detail 99)");
  EXPECT_EQ(state_after({"d", "", LifecycleEventType::Suspended, 0}), DomainState::Paused);
  EXPECT_STREQ(to_string(DomainState::Shutoff), "shut off");
}

}  // namespace
}  // namespace bowline::libvirt
