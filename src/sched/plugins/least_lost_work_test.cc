#include "sched/plugins/least_lost_work.h"

#include <gtest/gtest.h>

namespace tessera::sched {
namespace {

// A running job holding `gpu_milli`, started at `start`, checkpointed (as far
// as it reported) at `last_checkpoint`.
model::Job Running(std::int64_t gpu_milli, Time start, Time last_checkpoint, Seconds interval = 0) {
  model::Job job;
  job.state = model::JobState::kRunning;
  job.held = {gpu_milli, 0, 0, 0};
  job.start_time = start;
  job.last_checkpoint = last_checkpoint;
  job.checkpoint_interval = interval;
  return job;
}

TEST(LeastLostWorkTest, GpusTimesSecondsSinceStartWithoutCheckpoints) {
  const LeastLostWork cost;
  EXPECT_DOUBLE_EQ(cost.Cost(Running(4000, 1000, 1000), 4600), 4.0 * 3600);
  EXPECT_DOUBLE_EQ(cost.Cost(Running(1000, 1000, 1000), 4600), 3600.0);
}

TEST(LeastLostWorkTest, ReportedCheckpointResetsTheLoss) {
  const LeastLostWork cost;
  EXPECT_DOUBLE_EQ(cost.Cost(Running(2000, 1000, 4000), 4600), 2.0 * 600);
  EXPECT_DOUBLE_EQ(cost.Cost(Running(2000, 1000, 4600), 4600), 0.0);
}

TEST(LeastLostWorkTest, IntervalGivesTheLastMultipleSinceStart) {
  const LeastLostWork cost;
  // Started at 1000, checkpoints every 600: the last one at 2200, 300 s ago.
  EXPECT_DOUBLE_EQ(cost.Cost(Running(4000, 1000, 1000, 600), 2500), 4.0 * 300);
  // Exactly on a multiple nothing is lost.
  EXPECT_DOUBLE_EQ(cost.Cost(Running(4000, 1000, 1000, 600), 2200), 0.0);
  // Before the first interval has passed, the start is the checkpoint.
  EXPECT_DOUBLE_EQ(cost.Cost(Running(4000, 1000, 1000, 600), 1500), 4.0 * 500);
}

TEST(LeastLostWorkTest, ALaterReportedCheckpointWinsOverTheInterval) {
  const LeastLostWork cost;
  // Multiple at 2200, reported at 2400.
  EXPECT_DOUBLE_EQ(cost.Cost(Running(4000, 1000, 2400, 600), 2500), 4.0 * 100);
  // An earlier report does not beat the multiple.
  EXPECT_DOUBLE_EQ(cost.Cost(Running(4000, 1000, 1100, 600), 2500), 4.0 * 300);
}

TEST(LeastLostWorkTest, FractionalJobCostsProportionally) {
  const LeastLostWork cost;
  EXPECT_DOUBLE_EQ(cost.Cost(Running(250, 0, 0), 1000), 250.0);
  EXPECT_DOUBLE_EQ(cost.Cost(Running(500, 0, 0), 1000), 2 * cost.Cost(Running(250, 0, 0), 1000));
}

TEST(LeastLostWorkTest, BigGangCheckpointedRecentlyIsCheaperThanLongUncheckpointedJob) {
  const LeastLostWork cost;
  const model::Job gang = Running(64'000, 0, 86'340);  // 64 GPUs, checkpointed a minute ago
  const model::Job single = Running(1000, 0, 0);       // 1 GPU for a day without one
  EXPECT_LT(cost.Cost(gang, 86'400), cost.Cost(single, 86'400));
}

TEST(LeastLostWorkTest, NeverNegative) {
  const LeastLostWork cost;
  EXPECT_DOUBLE_EQ(cost.Cost(Running(1000, 1000, 1000), 900), 0.0);
  EXPECT_DOUBLE_EQ(cost.Cost(Running(1000, 1000, 1000, 600), 900), 0.0);
}

}  // namespace
}  // namespace tessera::sched
