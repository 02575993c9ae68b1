#include "store/operations.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "store_test_support.hpp"

namespace bowline::store {
namespace {

class OperationTest : public testing::StoreTest {};

TEST_F(OperationTest, LifecycleFromPendingToSucceeded) {
  auto& operations = store().operations();
  auto op = operations.create("space-1", "create");
  EXPECT_EQ(op.space_id, "space-1");
  EXPECT_EQ(op.kind, "create");
  EXPECT_EQ(op.state, OperationState::Pending);
  EXPECT_EQ(op.progress, 0);
  EXPECT_FALSE(op.finished());
  EXPECT_EQ(op.created_at, clock_.now_unix_ms());

  clock_.advance(10);
  operations.progress(op.id, "downloading image", 42);
  auto read = *operations.get(op.id);
  EXPECT_EQ(read.state, OperationState::Running);
  EXPECT_EQ(read.step, "downloading image");
  EXPECT_EQ(read.progress, 42);
  EXPECT_EQ(read.updated_at, op.created_at + 10);

  operations.progress(op.id, "too far", 250);
  EXPECT_EQ(operations.get(op.id)->progress, 100) << "clamped";

  clock_.advance(5);
  operations.succeed(op.id);
  read = *operations.get(op.id);
  EXPECT_EQ(read.state, OperationState::Succeeded);
  EXPECT_EQ(read.progress, 100);
  EXPECT_EQ(read.finished_at, op.created_at + 15);
  EXPECT_THROW(operations.progress(op.id, "late", 1), StoreError);
  EXPECT_THROW(operations.fail(op.id, "late"), StoreError);
  EXPECT_THROW(operations.progress(999, "x", 1), NotFoundError);
}

// The one place progress is recorded keeps it from going back: a step that reports less than
// the operation reached keeps the percent (its step name is still the current one).
TEST_F(OperationTest, ProgressNeverDecreases) {
  auto& operations = store().operations();
  const auto op = operations.create("space-1", "start");
  EXPECT_EQ(operations.progress(op.id, "writing cloud-init seed", 80), 80);
  EXPECT_EQ(operations.progress(op.id, "preparing disk", 70), 80);
  auto read = *operations.get(op.id);
  EXPECT_EQ(read.progress, 80);
  EXPECT_EQ(read.step, "preparing disk");
  EXPECT_EQ(operations.progress(op.id, "negative", -5), 80);
  EXPECT_EQ(operations.progress(op.id, "defining domain", 90), 90);
  EXPECT_EQ(operations.get(op.id)->progress, 90);
}

TEST_F(OperationTest, FailureKeepsTheReasonAndTheProgressReached) {
  auto op = store().operations().create("space-1", "start");
  store().operations().progress(op.id, "defining domain", 60);
  store().operations().fail(op.id, "bridge 'br9' does not exist");
  close();
  auto read = *store().operations().get(op.id);
  EXPECT_EQ(read.state, OperationState::Failed);
  EXPECT_EQ(read.error, "bridge 'br9' does not exist");
  EXPECT_EQ(read.progress, 60);
  EXPECT_TRUE(read.finished());
}

TEST_F(OperationTest, ListsPerSpaceNewestFirstAndUnfinishedOldestFirst) {
  auto& operations = store().operations();
  auto a = operations.create("s1", "create");
  auto b = operations.create("s2", "create");
  auto c = operations.create("s1", "stop");
  auto global = operations.create(std::nullopt, "pool-refill");
  operations.succeed(a.id);
  auto for_s1 = operations.list_for_space("s1");
  ASSERT_EQ(for_s1.size(), 2u);
  EXPECT_EQ(for_s1[0].id, c.id);
  EXPECT_EQ(for_s1[1].id, a.id);
  auto unfinished = operations.list_unfinished();
  ASSERT_EQ(unfinished.size(), 3u);
  EXPECT_EQ(unfinished[0].id, b.id);
  EXPECT_EQ(unfinished[2].id, global.id);
  EXPECT_EQ(unfinished[2].space_id, std::nullopt);
}

TEST_F(OperationTest, OperationsOutliveTheirSpace) {
  auto owner = make_user("alice").id;
  auto space = make_space("dev", owner, make_template().id);
  auto op = store().operations().create(space.id, "delete");
  store().events().append("space.deleted", space.id);
  store().spaces().remove(space.id);
  EXPECT_EQ(store().operations().get(op.id)->space_id, space.id);
  EXPECT_EQ(store().events().events_since(0, 10).at(0).space_id, space.id);
}

class EventTest : public testing::StoreTest {};

TEST_F(EventTest, EventsSinceReturnsLaterEventsInOrderUpToTheLimit) {
  auto& events = store().events();
  EXPECT_EQ(events.latest_seq(), 0);
  std::vector<std::int64_t> seqs;
  for (int i = 0; i < 5; ++i) {
    clock_.advance(1);
    seqs.push_back(events.append("space.state", "s1", {{"n", i}}).seq);
  }
  for (std::size_t i = 1; i < seqs.size(); ++i) EXPECT_GT(seqs[i], seqs[i - 1]);
  EXPECT_EQ(events.latest_seq(), seqs.back());

  auto page = events.events_since(0, 3);
  ASSERT_EQ(page.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(page[static_cast<std::size_t>(i)].seq, seqs[static_cast<std::size_t>(i)]);
    EXPECT_EQ(page[static_cast<std::size_t>(i)].payload["n"], i);
  }
  // Resume after the last one seen.
  auto rest = events.events_since(page.back().seq, 100);
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(rest[0].seq, seqs[3]);
  EXPECT_EQ(rest[1].seq, seqs[4]);
  EXPECT_EQ(rest[1].kind, "space.state");
  EXPECT_EQ(rest[1].space_id, "s1");
  EXPECT_EQ(rest[1].time, clock_.now_unix_ms());
  EXPECT_TRUE(events.events_since(seqs.back(), 100).empty());
}

TEST_F(EventTest, PayloadsRoundTripAsJson) {
  nlohmann::json payload{{"state", "error"}, {"error", "image \"x\" missing"}, {"list", {1, 2}}};
  store().events().append("space.state", std::nullopt, payload);
  close();
  auto events = store().events().events_since(0, 1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].payload, payload);
  EXPECT_EQ(events[0].space_id, std::nullopt);
}

TEST_F(EventTest, PruningNeverReusesSequenceNumbers) {
  auto& events = store().events();
  events.append("old", std::nullopt);
  clock_.advance(1000);
  auto kept = events.append("new", std::nullopt);
  EXPECT_EQ(events.prune_before(clock_.now_unix_ms()), 1);
  auto left = events.events_since(0, 10);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].seq, kept.seq);
  EXPECT_EQ(events.prune_before(clock_.now_unix_ms() + 1), 1);
  EXPECT_EQ(events.latest_seq(), kept.seq) << "remembered after pruning everything";
  EXPECT_GT(events.append("later", std::nullopt).seq, kept.seq);
}

}  // namespace
}  // namespace bowline::store
