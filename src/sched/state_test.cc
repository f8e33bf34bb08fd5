// SchedulerState's lifecycle rules: the restart budget of spec.restart.
#include "sched/state.h"

#include <gtest/gtest.h>

#include "sched/test_fixtures.h"

namespace tessera::sched {
namespace {

using fixtures::MakeCluster;
using fixtures::MakeJob;
using fixtures::MakeState;
using fixtures::StartJob;

TEST(SchedulerStateTest, ReleasesMoveWithEveryReleaseAndNoTwoStatesShareThem) {
  SchedulerState state = MakeState(MakeCluster(1, 8));
  const SchedulerState other = MakeState(MakeCluster(1, 8));
  EXPECT_NE(state.releases(), other.releases()) << "a plan made on one state must not pass for the other's";
  const model::JobId job = StartJob(state, MakeJob({.name = "a", .gpu_milli = 1000}), 0);
  const std::uint64_t before = state.releases();
  state.Finish(job, model::JobState::kSucceeded, 10);
  EXPECT_EQ(state.releases(), before + 1);
}

TEST(SchedulerStateTest, RequeueWithinTheRestartBudgetThenFail) {
  SchedulerState state = MakeState(MakeCluster(1, 8));
  model::Job job = MakeJob({.gpu_milli = 2000});
  job.max_restarts = 2;
  const model::JobId id = StartJob(state, std::move(job), 0);  // runs 0..15 on 2 GPUs
  const std::vector<model::TaskPlacement> placement = state.job(id).placements;
  ASSERT_TRUE(state.Requeue(id, 15));
  EXPECT_EQ(state.job(id).state, model::JobState::kPending);
  EXPECT_EQ(state.job(id).restarts, 1);
  EXPECT_EQ(state.cluster().allocated().gpu_milli, 0);
  EXPECT_DOUBLE_EQ(state.job(id).attained_gpu_seconds, 2.0 * 15);
  state.Bind(id, placement, 20);  // runs 20..25
  ASSERT_TRUE(state.Requeue(id, 25));
  EXPECT_EQ(state.job(id).restarts, 2);
  EXPECT_DOUBLE_EQ(state.job(id).attained_gpu_seconds, 2.0 * 15 + 2.0 * 5);
  state.Bind(id, placement, 30);
  EXPECT_DOUBLE_EQ(state.job(id).AttainedService(40), 2.0 * 30);  // the current run counts too
  EXPECT_FALSE(state.Requeue(id, 100));  // the third failure exhausts the budget
  EXPECT_EQ(state.job(id).state, model::JobState::kFailed);
  EXPECT_EQ(state.cluster().allocated().gpu_milli, 0);
  EXPECT_TRUE(state.jobs().running().empty());
  EXPECT_TRUE(state.jobs().pending().empty());
}

TEST(SchedulerStateTest, RestartsBackOffExponentiallyUpToTheCap) {
  SchedulerState state = MakeState(MakeCluster(1, 8));
  model::Job job = MakeJob({.gpu_milli = 1000});
  job.max_restarts = 10;
  job.restart_backoff = 10;
  job.max_restart_backoff = 35;
  const model::JobId id = StartJob(state, std::move(job), 0);
  const std::vector<model::TaskPlacement> placement = state.job(id).placements;
  Time now = 100;
  for (const Seconds wait : {10, 20, 35, 35}) {  // 10, 20, then 40 capped at 35
    ASSERT_TRUE(state.Requeue(id, now));
    EXPECT_EQ(state.job(id).not_before, now + wait);
    now += wait;
    state.Bind(id, placement, now);
    now += 5;
  }
}

TEST(SchedulerStateTest, ByDefaultAFailureEndsTheJob) {
  SchedulerState state = MakeState(MakeCluster(1, 8));
  const model::JobId id = StartJob(state, MakeJob({}), 0);
  EXPECT_FALSE(state.Requeue(id, 10));
  EXPECT_EQ(state.job(id).state, model::JobState::kFailed);
}

TEST(SchedulerStateTest, RestoreRetakesARunningJobsPlacementAndCharges) {
  SchedulerState before = MakeState(MakeCluster(2, 8));
  const model::JobId running = StartJob(before, MakeJob({.gpu_milli = 4000}), 0);
  const model::JobId pending = before.Submit(MakeJob({.gpu_milli = 8000}), 1);
  SchedulerState after = MakeState(MakeCluster(2, 8));
  for (const model::Job& job : before.jobs().all()) after.Restore(job);
  EXPECT_EQ(after.job(running).state, model::JobState::kRunning);
  EXPECT_EQ(after.job(running).placements, before.job(running).placements);
  EXPECT_EQ(after.cluster().allocated().gpu_milli, 4000);
  EXPECT_EQ(after.queues().queue(after.job(running).queue).allocated.gpu_milli, 4000);
  EXPECT_EQ(after.jobs().pending(), std::vector<model::JobId>{pending});
  EXPECT_EQ(after.jobs().running(), std::vector<model::JobId>{running});
}

}  // namespace
}  // namespace tessera::sched
