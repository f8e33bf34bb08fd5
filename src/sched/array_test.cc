// Job arrays in the scheduling core (model/job_array.h): elements start
// lazily, as capacity and the array's limit allow, so that an array's
// unstarted elements cost a cycle nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "model/invariants.h"
#include "sched/scheduler.h"
#include "sched/statement.h"
#include "sched/test_fixtures.h"

namespace tessera::sched {
namespace {

using fixtures::MakeArray;
using fixtures::MakeCluster;
using fixtures::MakeJob;
using fixtures::MakeState;
using model::JobId;
using model::JobState;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// The elements of `array` that exist, by state.
std::vector<std::int32_t> IndicesIn(const SchedulerState& state, JobId array, JobState s) {
  std::vector<std::int32_t> indices;
  for (const model::Job& job : state.jobs().all()) {
    if (job.array_parent == array && job.state == s) indices.push_back(job.array_index);
  }
  std::sort(indices.begin(), indices.end());
  return indices;
}

std::int64_t OutcomesOf(const CycleResult& cycle, JobId job) {
  return std::count_if(cycle.outcomes.begin(), cycle.outcomes.end(), [&](const Outcome& o) { return o.job == job; });
}

class ArrayTest : public ::testing::Test {
 protected:
  ArrayTest() : state_(MakeState(MakeCluster(2, 8))), scheduler_(std::move(Scheduler::Create(SchedulerConfig{})).value()) {}

  CycleResult Cycle(Time now) {
    CycleResult result = scheduler_.RunCycle(state_, now, binder_);
    EXPECT_THAT(model::CheckInvariants(state_.cluster(), state_.jobs().all(), state_.queues()), IsEmpty());
    return result;
  }

  SchedulerState state_;
  Scheduler scheduler_;
  NullBinder binder_;
};

TEST_F(ArrayTest, ALargeArrayCostsACycleWhatItsRunningElementsCost) {
  const JobId array = state_.Submit(MakeArray(MakeJob({.name = "sweep"}), "0-9999"), 0);
  const CycleResult first = Cycle(0);
  // One element per GPU of the 16 started, in index order; the rest do not exist.
  EXPECT_EQ(first.placed, 16);
  EXPECT_EQ(state_.jobs().size(), 17u);
  EXPECT_EQ(IndicesIn(state_, array, JobState::kRunning).back(), 15);
  EXPECT_EQ(state_.job(array).state, JobState::kPending);
  EXPECT_THAT(state_.jobs().pending(), ElementsAre(array));
  // The full cluster: the array is one pending job to the next cycle, one
  // outcome, whatever the 9,984 elements it has left.
  const CycleResult second = Cycle(10);
  EXPECT_EQ(second.placed, 0);
  EXPECT_EQ(OutcomesOf(second, array), 1);
  EXPECT_EQ(second.outcomes.back().reason, WaitReason::kCapacity);
  EXPECT_EQ(state_.jobs().size(), 17u);
}

TEST_F(ArrayTest, TheLimitHoldsActiveElementsAndFinishedOnesMakeRoom) {
  model::Job job = MakeJob({.name = "sweep"});
  job.max_restarts = 1;
  const JobId array = state_.Submit(MakeArray(std::move(job), "0-99%3"), 0);
  Cycle(0);
  EXPECT_THAT(IndicesIn(state_, array, JobState::kRunning), ElementsAre(0, 1, 2));
  const CycleResult held = Cycle(10);
  ASSERT_EQ(OutcomesOf(held, array), 1);
  EXPECT_EQ(held.outcomes.front().reason, WaitReason::kArrayLimit);
  EXPECT_EQ(Explain(held.outcomes.front(), state_), "waiting: 3 of its elements are active, as many as its limit allows (%3)");
  state_.Finish(model::ArrayElementId(array, 1), JobState::kSucceeded, 10);
  Cycle(20);
  EXPECT_THAT(IndicesIn(state_, array, JobState::kRunning), ElementsAre(0, 2, 3));
  // A requeued element waits as itself, and still counts against the limit.
  ASSERT_TRUE(state_.Requeue(model::ArrayElementId(array, 0), 30));
  EXPECT_EQ(state_.job(array).array_progress.active(), 3);
  EXPECT_EQ(OutcomesOf(Cycle(40), array), 1);  // still held; the element itself starts again
  EXPECT_THAT(IndicesIn(state_, array, JobState::kRunning), ElementsAre(0, 2, 3));
}

TEST_F(ArrayTest, AnArrayEndsWithItsElements) {
  const JobId array = state_.Submit(MakeArray(MakeJob({.name = "a"}), "1,3"), 0);
  const JobId after = state_.Submit(MakeJob({.name = "after"}), 0);
  state_.job(after).depends_on = {model::Dependency(array, model::Dependency::When::kSucceeded)};
  Cycle(0);
  EXPECT_EQ(state_.job(array).state, JobState::kRunning);  // every element started
  EXPECT_EQ(state_.job(after).state, JobState::kPending);   // waits for the whole array
  state_.Finish(model::ArrayElementId(array, 0), JobState::kSucceeded, 0);
  Cycle(10);
  EXPECT_EQ(state_.job(after).state, JobState::kPending);
  state_.Finish(model::ArrayElementId(array, 1), JobState::kSucceeded, 10);
  EXPECT_EQ(state_.job(array).state, JobState::kSucceeded);
  Cycle(20);
  EXPECT_EQ(state_.job(after).state, JobState::kRunning);
}

TEST_F(ArrayTest, CancellingOneElementLeavesTheOthersAndCancellingTheArrayStopsItsStarts) {
  const JobId array = state_.Submit(MakeArray(MakeJob({.name = "a", .gpu_milli = 8000}), "0-9"), 0);
  Cycle(0);
  EXPECT_THAT(IndicesIn(state_, array, JobState::kRunning), ElementsAre(0, 1));
  state_.Finish(model::ArrayElementId(array, 1), JobState::kCancelled, 20);  // cancel 12[1]
  state_.CancelUnstarted(array, 2);                                     // cancel 12[2], not started
  Cycle(10);
  EXPECT_THAT(IndicesIn(state_, array, JobState::kRunning), ElementsAre(0, 3));
  EXPECT_THAT(IndicesIn(state_, array, JobState::kCancelled), ElementsAre(1, 2));
  // The whole array: it ends at once; its running elements are the caller's to end.
  state_.Finish(array, JobState::kCancelled, 20);
  state_.Finish(model::ArrayElementId(array, 0), JobState::kCancelled, 20);
  state_.Finish(model::ArrayElementId(array, 3), JobState::kCancelled, 20);
  Cycle(20);
  EXPECT_EQ(state_.jobs().running().size(), 0u);
  EXPECT_EQ(state_.jobs().pending().size(), 0u);
  EXPECT_EQ(state_.job(array).state, JobState::kCancelled);
}

TEST_F(ArrayTest, ArraysShareByFairShareElementByElement) {
  SchedulerState state(MakeCluster(2, 8), *model::QueueTree::Build({{"qa", 8000, model::kUnlimited, 1.0},
                                                                      {"qb", 8000, model::kUnlimited, 1.0}}));
  const JobId a = state.Submit(MakeArray(MakeJob({.name = "a", .queue = state.queues().Find("qa")}), "0-99"), 0);
  const JobId b = state.Submit(MakeArray(MakeJob({.name = "b", .queue = state.queues().Find("qb")}), "0-99"), 1);
  scheduler_.RunCycle(state, 0, binder_);
  EXPECT_EQ(IndicesIn(state, a, JobState::kRunning).size(), 8u);
  EXPECT_EQ(IndicesIn(state, b, JobState::kRunning).size(), 8u);
}

TEST_F(ArrayTest, AnArrayNeverPreemptsItsOwnElements) {
  // Least attained service may displace jobs of equal priority; the array's
  // next element must not displace its running siblings.
  SchedulerConfig config;
  config.job_order = "las";
  config.preempt_by_job_order = true;
  Scheduler las = std::move(Scheduler::Create(config)).value();
  SchedulerState state = MakeState(MakeCluster(1, 1));
  const JobId array = state.Submit(MakeArray(MakeJob({.name = "a"}), "0-1"), 0);
  las.RunCycle(state, 0, binder_);
  const CycleResult later = las.RunCycle(state, 100'000, binder_);
  EXPECT_THAT(later.evictions, IsEmpty());
  EXPECT_THAT(IndicesIn(state, array, JobState::kRunning), ElementsAre(0));
}

TEST_F(ArrayTest, ARolledBackStartTakesBackTheElement) {
  const JobId array = state_.Submit(MakeArray(MakeJob({.name = "a"}), "0-3"), 0);
  const std::size_t jobs = state_.jobs().size();
  {
    Statement statement(state_, 0);
    const JobId element = statement.Spawn(array);
    statement.Bind(element, {fixtures::WholeGpus(state_.cluster(), 0, {0})});
    EXPECT_EQ(state_.jobs().size(), jobs + 1);
  }  // never committed: rolled back
  EXPECT_EQ(state_.jobs().size(), jobs);
  EXPECT_EQ(state_.job(array).array_progress.created(), 0);
  EXPECT_EQ(state_.cluster().allocated().gpu_milli, 0);
  Cycle(0);
  EXPECT_THAT(IndicesIn(state_, array, JobState::kRunning), ElementsAre(0, 1, 2, 3));
}

}  // namespace
}  // namespace tessera::sched
