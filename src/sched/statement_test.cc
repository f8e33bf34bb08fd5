#include "sched/statement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sched/test_fixtures.h"

namespace tessera::sched {
namespace {

using fixtures::MakeCluster;
using fixtures::MakeJob;
using fixtures::MakeState;
using fixtures::WholeGpus;
using model::JobId;
using model::JobState;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Records every decision as text, in the order the binder receives them.
class RecordingBinder final : public Binder {
 public:
  void Bind(const model::Job& job) override {
    events.push_back("bind " + job.name + " on " + std::to_string(job.placements.size()) + " tasks");
  }
  void Evict(const model::Job& victim, const model::Job& preemptor, EvictReason reason) override {
    events.push_back("evict " + victim.name + " for " + preemptor.name + " (" + std::string(ToString(reason)) + ")");
  }
  void Spawn(const model::Job& element) override {
    events.push_back("spawn " + element.name + "[" + std::to_string(element.array_index) + "]");
  }
  std::vector<std::string> events;
};

// What a statement must restore exactly.
struct Snapshot {
  model::Resources allocated;
  std::vector<model::Resources> queue_allocated, queue_own;
  std::vector<JobState> states;
  std::vector<std::vector<model::TaskPlacement>> placements;
  std::vector<model::Resources> held;
  std::vector<Time> start_times, checkpoints;
  std::vector<JobId> pending, running;
  std::vector<std::uint64_t> free_masks;
  bool operator==(const Snapshot&) const = default;
};

std::string Diff(const Snapshot& a, const Snapshot& b) {
  std::string d;
  if (!(a.allocated == b.allocated)) d += " allocated";
  if (a.queue_allocated != b.queue_allocated) d += " queue_allocated";
  if (a.queue_own != b.queue_own) d += " queue_own";
  if (a.states != b.states) d += " states";
  if (a.placements != b.placements) d += " placements";
  if (a.held != b.held) d += " held";
  if (a.start_times != b.start_times) d += " start_times";
  if (a.checkpoints != b.checkpoints) d += " checkpoints";
  if (a.pending != b.pending) d += " pending";
  if (a.running != b.running) d += " running";
  if (a.free_masks != b.free_masks) d += " free_masks";
  return d;
}

Snapshot Take(const SchedulerState& state) {
  Snapshot s;
  s.allocated = state.cluster().allocated();
  for (const model::Queue& q : state.queues().queues()) {
    s.queue_allocated.push_back(q.allocated);
    s.queue_own.push_back(q.own_allocated);
  }
  for (const model::Job& j : state.jobs().all()) {
    s.states.push_back(j.state);
    s.placements.push_back(j.placements);
    s.held.push_back(j.held);
    s.start_times.push_back(j.start_time);
    s.checkpoints.push_back(j.last_checkpoint);
  }
  // The pending and running sets are sets: their order is not kept.
  s.pending = state.jobs().pending();
  s.running = state.jobs().running();
  std::sort(s.pending.begin(), s.pending.end());
  std::sort(s.running.begin(), s.running.end());
  for (const model::Node& n : state.cluster().nodes()) s.free_masks.push_back(n.free_mask);
  return s;
}

class StatementTest : public ::testing::Test {
 protected:
  StatementTest() : state_(MakeState(MakeCluster(2, 8))) {
    // A job running on n0 since t=50, checkpointed at t=80.
    running_ = fixtures::StartJobOn(state_, MakeJob({.name = "running", .gpu_milli = 4000}),
                                    {WholeGpus(state_.cluster(), 0, {0, 1, 2, 3})}, 50);
    state_.Checkpointed(running_, 80);
    a_ = state_.Submit(MakeJob({.name = "a", .gpu_milli = 4000}), 60);
    b_ = state_.Submit(MakeJob({.name = "b", .gpu_milli = 2000}), 70);
  }

  std::vector<model::TaskPlacement> On(std::int32_t node, std::vector<std::int32_t> locals) {
    return {WholeGpus(state_.cluster(), node, locals)};
  }

  SchedulerState state_;
  JobId running_, a_, b_;
};

TEST_F(StatementTest, BindAppliesImmediately) {
  Statement statement(state_, 100);
  statement.Bind(a_, On(1, {0, 1, 2, 3}));
  EXPECT_EQ(state_.job(a_).state, JobState::kRunning);
  EXPECT_EQ(state_.job(a_).start_time, 100);
  EXPECT_EQ(state_.cluster().allocated().gpu_milli, 8000);
  EXPECT_EQ(state_.queues().queue(fixtures::kDefaultQueue).allocated.gpu_milli, 8000);
  NullBinder binder;
  statement.Commit(binder);
}

TEST_F(StatementTest, RollbackOfBindsRestoresEverything) {
  const Snapshot before = Take(state_);
  Statement statement(state_, 100);
  const Statement::Checkpoint mark = statement.Mark();
  statement.Bind(a_, On(1, {0, 1, 2, 3}));
  statement.Bind(b_, On(0, {4, 5}));
  ASSERT_FALSE(Take(state_) == before);
  statement.RollbackTo(mark);
  EXPECT_TRUE(Take(state_) == before) << Diff(Take(state_), before);
  EXPECT_EQ(state_.job(a_).state, JobState::kPending);
  EXPECT_THAT(state_.job(a_).placements, IsEmpty());
  EXPECT_EQ(state_.job(a_).held, model::Resources{});
  EXPECT_EQ(state_.queues().queue(fixtures::kDefaultQueue).allocated.gpu_milli, 4000);
  EXPECT_THAT(state_.cluster().AuditIndexes(), IsEmpty());
}

TEST_F(StatementTest, RollbackToAMarkKeepsEarlierOps) {
  Statement statement(state_, 100);
  statement.Bind(a_, On(1, {0, 1, 2, 3}));
  const Snapshot after_a = Take(state_);
  const Statement::Checkpoint mark = statement.Mark();
  statement.Bind(b_, On(0, {4, 5}));
  statement.RollbackTo(mark);
  EXPECT_TRUE(Take(state_) == after_a) << Diff(Take(state_), after_a);
  EXPECT_EQ(state_.job(a_).state, JobState::kRunning);
  EXPECT_EQ(state_.job(b_).state, JobState::kPending);
  // Rolling back to the same mark again changes nothing.
  statement.RollbackTo(mark);
  EXPECT_TRUE(Take(state_) == after_a) << Diff(Take(state_), after_a);
}

TEST_F(StatementTest, RollbackOfAnEvictionRestoresPlacementStartAndCheckpoint) {
  const Snapshot before = Take(state_);
  const std::vector<model::TaskPlacement> placements = state_.job(running_).placements;
  Statement statement(state_, 100);
  const Statement::Checkpoint mark = statement.Mark();
  statement.Evict(running_, a_, EvictReason::kPreempt);
  EXPECT_EQ(state_.job(running_).state, JobState::kPending);
  EXPECT_EQ(state_.cluster().allocated().gpu_milli, 0);
  statement.RollbackTo(mark);
  EXPECT_TRUE(Take(state_) == before) << Diff(Take(state_), before);
  const model::Job& job = state_.job(running_);
  EXPECT_EQ(job.state, JobState::kRunning);
  EXPECT_EQ(job.placements, placements);
  EXPECT_EQ(job.start_time, 50);
  EXPECT_EQ(job.last_checkpoint, 80);
  EXPECT_EQ(job.held.gpu_milli, 4000);
  EXPECT_THAT(state_.cluster().AuditIndexes(), IsEmpty());
}

TEST_F(StatementTest, RollbackOfEvictionAndRebindOnTheFreedGpus) {
  const Snapshot before = Take(state_);
  Statement statement(state_, 100);
  statement.Evict(running_, a_, EvictReason::kReclaim);
  statement.Bind(a_, On(0, {0, 1, 2, 3}));  // the victim's GPUs
  statement.RollbackTo(0);
  EXPECT_TRUE(Take(state_) == before) << Diff(Take(state_), before);
  EXPECT_THAT(state_.cluster().AuditIndexes(), IsEmpty());
}

TEST_F(StatementTest, CommitReportsEvictionsBeforeBinds) {
  RecordingBinder binder;
  {
    Statement statement(state_, 100);
    statement.Bind(b_, On(1, {0, 1}));
    statement.Evict(running_, a_, EvictReason::kReclaim);
    statement.Bind(a_, On(0, {0, 1, 2, 3}));
    statement.Commit(binder);
  }
  EXPECT_THAT(binder.events, ElementsAre("evict running for a (reclaim)", "bind b on 1 tasks", "bind a on 1 tasks"));
  // Committed: the statement's destructor kept every decision.
  EXPECT_EQ(state_.job(a_).state, JobState::kRunning);
  EXPECT_EQ(state_.job(b_).state, JobState::kRunning);
  EXPECT_EQ(state_.job(running_).state, JobState::kPending);
}

TEST_F(StatementTest, CommitReportsNeitherBindNorEvictionOfAJobThatNeverStarted) {
  RecordingBinder binder;
  Statement statement(state_, 100);
  statement.Bind(b_, On(1, {0, 1}));
  statement.Evict(b_, a_, EvictReason::kPreempt);
  statement.Commit(binder);
  EXPECT_THAT(binder.events, Not(Contains(HasSubstr("bind b"))));
  EXPECT_THAT(binder.events, Not(Contains(HasSubstr("evict b"))));
  EXPECT_EQ(state_.job(b_).state, JobState::kPending);
}

TEST_F(StatementTest, CommitClearsTheLog) {
  RecordingBinder binder;
  Statement statement(state_, 100);
  statement.Bind(b_, On(1, {0, 1}));
  statement.Commit(binder);
  EXPECT_EQ(statement.Mark(), 0u);
  statement.Commit(binder);
  EXPECT_EQ(binder.events.size(), 1u);
  statement.RollbackTo(0);  // nothing left to undo
  EXPECT_EQ(state_.job(b_).state, JobState::kRunning);
}

TEST_F(StatementTest, NothingReachesTheBinderBeforeCommit) {
  RecordingBinder binder;
  Statement statement(state_, 100);
  statement.Bind(b_, On(1, {0, 1}));
  statement.Evict(running_, a_, EvictReason::kPreempt);
  EXPECT_THAT(binder.events, IsEmpty());
}

TEST_F(StatementTest, DestructorOfAnUncommittedStatementRollsBack) {
  const Snapshot before = Take(state_);
  {
    Statement statement(state_, 100);
    statement.Evict(running_, a_, EvictReason::kPreempt);
    statement.Bind(a_, On(1, {0, 1, 2, 3}));
    statement.Bind(b_, On(0, {0, 1}));
  }
  EXPECT_TRUE(Take(state_) == before) << Diff(Take(state_), before);
  EXPECT_THAT(state_.cluster().AuditIndexes(), IsEmpty());
}

}  // namespace
}  // namespace tessera::sched
