// GET /api/v1/events: server-sent events in order, replay from `since`, only one's own
// spaces, heartbeats, and a clean end when the client goes away.
#include <gtest/gtest.h>

#include "api_test_support.hpp"

namespace bowline::api::testing {
namespace {

class EventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto r = client_.post("/api/v1/templates", stack_.admin_token(),
                                {{"name", "dev"}, {"yaml", bridged_template()}});
    ASSERT_EQ(r.status, 201) << r.body;
  }
  // Creates a stopped space; returns its id.
  std::string create(const std::string& token, const std::string& name) {
    const auto r = client_.post("/api/v1/spaces", token,
                                {{"template", "dev"}, {"name", name}, {"start", false}});
    EXPECT_EQ(r.status, 202) << r.body;
    return r.parsed()["space"]["id"].get<std::string>();
  }
  // Waits until `n` streams listen (their replay is done and they are live).
  void wait_listening(int n) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (stack_.api().listening_streams() != n && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(10ms);
    ASSERT_EQ(stack_.api().listening_streams(), n);
  }

  ApiStack stack_;
  HttpClient client_{stack_.port()};
};

std::vector<std::string> kinds(const std::vector<SseEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.kind);
  return out;
}

TEST_F(EventsTest, AStreamDeliversTheSpacesEventsInOrderAndOnlyTheOwners) {
  const auto alice = stack_.make_user(unique("alice"));
  const auto bob = stack_.make_user(unique("bob"));
  SseStream stream(stack_.port(), alice, "/api/v1/events");
  ASSERT_EQ(stream.status(), 200) << stream.head();
  EXPECT_NE(stream.head().find("Content-Type: text/event-stream"), std::string::npos);
  SseStream admin(stack_.port(), stack_.admin_token(), "/api/v1/events");
  wait_listening(2);

  const auto bobs = create(bob, "other");
  const auto id = create(alice, "box");
  const auto events = stream.until("operation.succeeded", id);
  ASSERT_EQ(kinds(events), (std::vector<std::string>{"space.created", "operation.started",
                                                     "space.state", "operation.succeeded"}));
  std::int64_t previous = 0;
  for (const auto& e : events) {
    EXPECT_EQ(e.data["spaceId"], id) << "bob's events must not reach alice";
    EXPECT_EQ(e.data["kind"], e.kind);
    EXPECT_EQ(e.data["seq"], e.id);
    EXPECT_GT(e.id, previous);
    EXPECT_GT(e.data["time"].get<std::int64_t>(), 0);
    previous = e.id;
  }
  EXPECT_EQ(events[2].data["payload"]["state"], "stopped");

  // The admin sees both spaces' events.
  std::set<std::string> seen;
  for (const auto& e : admin.until("operation.succeeded", id)) seen.insert(e.data["spaceId"]);
  EXPECT_TRUE(seen.count(id));
  EXPECT_TRUE(seen.count(bobs));
}

TEST_F(EventsTest, ReplaysFromSinceThenGoesLive) {
  const auto alice = stack_.make_user(unique("alice"));
  const auto before = stack_.store().events().latest_seq();
  const auto id = create(alice, "box");
  stack_.engine().wait_idle();
  // Everything after `before`, from the store...
  SseStream replay(stack_.port(), alice, "/api/v1/events?since=" + std::to_string(before));
  ASSERT_EQ(replay.status(), 200);
  const auto replayed = replay.until("operation.succeeded", id);
  ASSERT_EQ(kinds(replayed), (std::vector<std::string>{"space.created", "operation.started",
                                                       "space.state", "operation.succeeded"}));
  EXPECT_GT(replayed.front().id, before);
  // ...then what happens next, with no gap and no repeat.
  wait_listening(1);
  const auto r = client_.request("DELETE", "/api/v1/spaces/" + id, alice);
  ASSERT_EQ(r.status, 202);
  const auto live = replay.until("space.deleted", id);
  ASSERT_FALSE(live.empty());
  EXPECT_EQ(live.front().kind, "operation.started");
  EXPECT_GT(live.front().id, replayed.back().id);
  EXPECT_EQ(live.back().kind, "space.deleted");  // seen although the space row is gone

  // Resuming from the middle gives the rest; Last-Event-ID works like since.
  SseStream middle(stack_.port(), alice, "/api/v1/events?since=" + std::to_string(replayed[1].id));
  const auto rest = middle.until("operation.succeeded", id);
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].id, replayed[2].id);

  EXPECT_EQ(client_.get("/api/v1/events?since=abc", alice).status, 400);
}

TEST_F(EventsTest, ALongHistoryIsReplayedAtTheClientsPace) {
  // 12 MB of history: more than a stream may queue (8 MiB) for a client that is behind.
  const std::string filler(2000, 'x');
  const auto before = stack_.store().events().latest_seq();
  for (int i = 0; i < 6000; ++i)
    stack_.events().publish(engine::event::kReconcileError, std::nullopt,
                            {{"i", i}, {"x", filler}});
  SseStream stream(stack_.port(), stack_.admin_token(),
                   "/api/v1/events?since=" + std::to_string(before));
  std::this_thread::sleep_for(1s);  // a client that is slow to start reading
  int seen = 0;
  std::int64_t last = before;
  while (auto e = stream.next(10s)) {
    ASSERT_EQ(e->id, last + 1);
    last = e->id;
    EXPECT_EQ(e->data["payload"]["i"], seen);
    if (++seen == 6000) break;
  }
  EXPECT_EQ(seen, 6000);
}

TEST_F(EventsTest, HeartbeatsAndACleanEndWhenTheClientLeaves) {
  const auto alice = stack_.make_user(unique("alice"));
  {
    SseStream stream(stack_.port(), alice, "/api/v1/events");
    wait_listening(1);
    EXPECT_EQ(stack_.server().open_streams(), 1u);
    stream.drain(800ms);  // the test server beats every 300 ms
    int beats = 0;
    for (const auto& c : stream.comments()) beats += c == ": heartbeat";
    EXPECT_GE(beats, 2);
  }
  // The client closed its socket: the server notices, stops listening on the bus.
  wait_listening(0);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (stack_.server().open_streams() != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(stack_.server().open_streams(), 0u);
  // Events still flow to nobody without trouble.
  create(alice, "after");
  stack_.engine().wait_idle();
}

TEST_F(EventsTest, StoppingTheServerEndsOpenStreams) {
  const auto alice = stack_.make_user(unique("alice"));
  SseStream stream(stack_.port(), alice, "/api/v1/events");
  wait_listening(1);
  stack_.server().stop();  // returns once every stream's close() has run
  EXPECT_EQ(stack_.api().listening_streams(), 0);
  EXPECT_EQ(stack_.server().open_streams(), 0u);
  EXPECT_EQ(stack_.server().open_connections(), 0u);
}

}  // namespace
}  // namespace bowline::api::testing
