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

TEST(SchedulerStateTest, RequeueWithinTheRestartBudgetThenFail) {
  SchedulerState state = MakeState(MakeCluster(1, 8));
  model::Job job = MakeJob({.gpu_milli = 2000});
  job.max_restarts = 2;
  const model::JobId id = StartJob(state, std::move(job), 0);
  for (int restart = 1; restart <= 2; ++restart) {
    ASSERT_TRUE(state.Requeue(id));
    EXPECT_EQ(state.job(id).state, model::JobState::kPending);
    EXPECT_EQ(state.job(id).restarts, restart);
    EXPECT_EQ(state.cluster().allocated().gpu_milli, 0);
    state.Bind(id, state.job(id).placements.empty() ? std::vector<model::TaskPlacement>{fixtures::WholeGpus(state.cluster(), 0, {0, 1})}
                                                    : state.job(id).placements, restart * 10);
  }
  EXPECT_FALSE(state.Requeue(id));  // the third failure exhausts the budget
  EXPECT_EQ(state.job(id).state, model::JobState::kFailed);
  EXPECT_EQ(state.cluster().allocated().gpu_milli, 0);
  EXPECT_TRUE(state.jobs().running().empty());
  EXPECT_TRUE(state.jobs().pending().empty());
}

TEST(SchedulerStateTest, ByDefaultAFailureEndsTheJob) {
  SchedulerState state = MakeState(MakeCluster(1, 8));
  const model::JobId id = StartJob(state, MakeJob({}), 0);
  EXPECT_FALSE(state.Requeue(id));
  EXPECT_EQ(state.job(id).state, model::JobState::kFailed);
}

}  // namespace
}  // namespace tessera::sched
