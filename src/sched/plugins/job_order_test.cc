#include "sched/plugins/job_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace tessera::sched {
namespace {

model::Job MakeJob(std::int32_t id, Time submit, Seconds walltime = 0) {
  model::Job job;
  job.id = model::JobId(id);
  job.submit_time = submit;
  job.walltime = walltime;
  return job;
}

TEST(FifoOrderTest, EarlierSubmissionFirstEvenWithLargerId) {
  const FifoOrder order;
  const model::Job early = MakeJob(7, 100);
  const model::Job late = MakeJob(2, 200);
  EXPECT_TRUE(order.Before(early, late, 0));
  EXPECT_FALSE(order.Before(late, early, 0));
}

TEST(FifoOrderTest, IdBreaksTiesInSubmitTime) {
  const FifoOrder order;
  const model::Job a = MakeJob(3, 100);
  const model::Job b = MakeJob(4, 100);
  EXPECT_TRUE(order.Before(a, b, 0));
  EXPECT_FALSE(order.Before(b, a, 0));
}

TEST(FifoOrderTest, IsStrict) {
  const FifoOrder order;
  const model::Job a = MakeJob(3, 100);
  EXPECT_FALSE(order.Before(a, a, 0));
}

TEST(FifoOrderTest, IgnoresWalltime) {
  const FifoOrder order;
  EXPECT_TRUE(order.Before(MakeJob(1, 100, 9000), MakeJob(2, 200, 10), 0));
}

TEST(ShortestFirstOrderTest, ShorterWalltimeFirstEvenIfSubmittedLater) {
  const ShortestFirstOrder order(3600);
  const model::Job long_early = MakeJob(1, 100, 7200);
  const model::Job short_late = MakeJob(2, 500, 60);
  EXPECT_TRUE(order.Before(short_late, long_early, 0));
  EXPECT_FALSE(order.Before(long_early, short_late, 0));
}

TEST(ShortestFirstOrderTest, MissingWalltimeCountsAsTheDefault) {
  const ShortestFirstOrder order(3600);
  const model::Job none = MakeJob(1, 100, 0);
  // Shorter than the default: goes first although submitted later.
  EXPECT_TRUE(order.Before(MakeJob(2, 200, 1800), none, 0));
  EXPECT_FALSE(order.Before(none, MakeJob(2, 200, 1800), 0));
  // Longer than the default: goes after.
  EXPECT_TRUE(order.Before(none, MakeJob(3, 50, 7200), 0));
  // A job without an estimate is not treated as zero-length.
  EXPECT_FALSE(order.Before(MakeJob(4, 300, 0), MakeJob(5, 200, 3000), 0));
}

TEST(ShortestFirstOrderTest, DefaultDependsOnConfiguration) {
  const model::Job none = MakeJob(1, 100, 0);
  const model::Job hour = MakeJob(2, 50, 3600);
  EXPECT_TRUE(ShortestFirstOrder(60).Before(none, hour, 0));
  EXPECT_FALSE(ShortestFirstOrder(86400).Before(none, hour, 0));
}

TEST(ShortestFirstOrderTest, EqualWalltimesFallBackToFifo) {
  const ShortestFirstOrder order(3600);
  EXPECT_TRUE(order.Before(MakeJob(9, 100, 600), MakeJob(1, 200, 600), 0));
  EXPECT_FALSE(order.Before(MakeJob(1, 200, 600), MakeJob(9, 100, 600), 0));
  // Same walltime and submit time: the id decides.
  EXPECT_TRUE(order.Before(MakeJob(1, 100, 600), MakeJob(2, 100, 600), 0));
  // No estimate and an estimate equal to the default tie on walltime.
  EXPECT_TRUE(order.Before(MakeJob(5, 100, 0), MakeJob(4, 200, 3600), 0));
  EXPECT_TRUE(order.Before(MakeJob(4, 100, 3600), MakeJob(5, 200, 0), 0));
}

TEST(ShortestFirstOrderTest, SortsAMixedList) {
  const ShortestFirstOrder order(1000);
  std::vector<model::Job> jobs = {MakeJob(0, 10, 0), MakeJob(1, 20, 500), MakeJob(2, 30, 2000), MakeJob(3, 5, 500),
                                  MakeJob(4, 1, 1000)};
  std::sort(jobs.begin(), jobs.end(), [&](const model::Job& a, const model::Job& b) { return order.Before(a, b, 0); });
  std::vector<std::int32_t> ids;
  for (const model::Job& j : jobs) ids.push_back(j.id.value());
  EXPECT_EQ(ids, (std::vector<std::int32_t>{3, 1, 4, 0, 2}));
}

}  // namespace
}  // namespace tessera::sched

namespace tessera::sched {
namespace {

model::Job Running(std::int64_t gpus, Time start, double attained_before, Time submit, std::int32_t id) {
  model::Job job;
  job.id = model::JobId(id);
  job.submit_time = submit;
  job.state = model::JobState::kRunning;
  job.start_time = start;
  job.held.gpu_milli = gpus * 1000;
  job.attained_gpu_seconds = attained_before;
  model::TaskGroup group;
  group.request.gpu_milli = gpus * 1000;
  job.groups.push_back(group);
  return job;
}

TEST(LasOrderTest, QueuesByAttainedGpuSecondsThenFifo) {
  const LasOrder las({100.0, 1000.0});
  model::Job fresh = Running(1, 0, 0, /*submit=*/50, 1);
  fresh.state = model::JobState::kPending;
  const model::Job old = Running(4, /*start=*/0, 0, /*submit=*/0, 2);  // 4 GPU-seconds per second
  EXPECT_EQ(las.QueueOf(old, 20), 0u);   // 80
  EXPECT_EQ(las.QueueOf(old, 30), 1u);   // 120 passed the first threshold
  EXPECT_EQ(las.QueueOf(old, 300), 2u);  // 1200
  EXPECT_TRUE(las.Before(old, fresh, 20));   // same queue: FIFO, the older first
  EXPECT_TRUE(las.Before(fresh, old, 30));   // the old job dropped a queue
  const model::Job resumed = Running(1, 100, /*attained_before=*/150, 0, 3);  // service before this run counts
  EXPECT_EQ(las.QueueOf(resumed, 100), 1u);
}

TEST(LasOrderTest, DisplacesOnlyFromALowerQueue) {
  const LasOrder las({100.0, 1000.0});
  const model::Job old = Running(4, /*start=*/0, 0, /*submit=*/0, 1);
  model::Job early = Running(1, 0, 0, /*submit=*/-10, 2);
  early.state = model::JobState::kPending;
  EXPECT_TRUE(las.Before(early, old, 20));      // both in queue 0: FIFO puts it first
  EXPECT_FALSE(las.Displaces(early, old, 20));  // but evicting for FIFO order alone is not worth it
  EXPECT_TRUE(las.Displaces(early, old, 30));   // the old job dropped to queue 1
  EXPECT_FALSE(las.Displaces(old, early, 30));
}

TEST(OracleSrtfOrderTest, ShortestRemainingTrueTimeFirst) {
  const OracleSrtfOrder srtf;
  model::Job a = Running(2, 0, 0, 0, 1);
  a.oracle_duration = 100;
  model::Job b = Running(2, 50, 0, 10, 2);
  b.state = model::JobState::kPending;
  b.oracle_duration = 60;
  EXPECT_TRUE(srtf.Before(b, a, 20));   // a has 80 s left, b 60
  EXPECT_TRUE(srtf.Before(a, b, 50));   // a has 50 s left
}

}  // namespace
}  // namespace tessera::sched
