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
  EXPECT_TRUE(order.Before(early, late));
  EXPECT_FALSE(order.Before(late, early));
}

TEST(FifoOrderTest, IdBreaksTiesInSubmitTime) {
  const FifoOrder order;
  const model::Job a = MakeJob(3, 100);
  const model::Job b = MakeJob(4, 100);
  EXPECT_TRUE(order.Before(a, b));
  EXPECT_FALSE(order.Before(b, a));
}

TEST(FifoOrderTest, IsStrict) {
  const FifoOrder order;
  const model::Job a = MakeJob(3, 100);
  EXPECT_FALSE(order.Before(a, a));
}

TEST(FifoOrderTest, IgnoresWalltime) {
  const FifoOrder order;
  EXPECT_TRUE(order.Before(MakeJob(1, 100, 9000), MakeJob(2, 200, 10)));
}

TEST(ShortestFirstOrderTest, ShorterWalltimeFirstEvenIfSubmittedLater) {
  const ShortestFirstOrder order(3600);
  const model::Job long_early = MakeJob(1, 100, 7200);
  const model::Job short_late = MakeJob(2, 500, 60);
  EXPECT_TRUE(order.Before(short_late, long_early));
  EXPECT_FALSE(order.Before(long_early, short_late));
}

TEST(ShortestFirstOrderTest, MissingWalltimeCountsAsTheDefault) {
  const ShortestFirstOrder order(3600);
  const model::Job none = MakeJob(1, 100, 0);
  // Shorter than the default: goes first although submitted later.
  EXPECT_TRUE(order.Before(MakeJob(2, 200, 1800), none));
  EXPECT_FALSE(order.Before(none, MakeJob(2, 200, 1800)));
  // Longer than the default: goes after.
  EXPECT_TRUE(order.Before(none, MakeJob(3, 50, 7200)));
  // A job without an estimate is not treated as zero-length.
  EXPECT_FALSE(order.Before(MakeJob(4, 300, 0), MakeJob(5, 200, 3000)));
}

TEST(ShortestFirstOrderTest, DefaultDependsOnConfiguration) {
  const model::Job none = MakeJob(1, 100, 0);
  const model::Job hour = MakeJob(2, 50, 3600);
  EXPECT_TRUE(ShortestFirstOrder(60).Before(none, hour));
  EXPECT_FALSE(ShortestFirstOrder(86400).Before(none, hour));
}

TEST(ShortestFirstOrderTest, EqualWalltimesFallBackToFifo) {
  const ShortestFirstOrder order(3600);
  EXPECT_TRUE(order.Before(MakeJob(9, 100, 600), MakeJob(1, 200, 600)));
  EXPECT_FALSE(order.Before(MakeJob(1, 200, 600), MakeJob(9, 100, 600)));
  // Same walltime and submit time: the id decides.
  EXPECT_TRUE(order.Before(MakeJob(1, 100, 600), MakeJob(2, 100, 600)));
  // No estimate and an estimate equal to the default tie on walltime.
  EXPECT_TRUE(order.Before(MakeJob(5, 100, 0), MakeJob(4, 200, 3600)));
  EXPECT_TRUE(order.Before(MakeJob(4, 100, 3600), MakeJob(5, 200, 0)));
}

TEST(ShortestFirstOrderTest, SortsAMixedList) {
  const ShortestFirstOrder order(1000);
  std::vector<model::Job> jobs = {MakeJob(0, 10, 0), MakeJob(1, 20, 500), MakeJob(2, 30, 2000), MakeJob(3, 5, 500),
                                  MakeJob(4, 1, 1000)};
  std::sort(jobs.begin(), jobs.end(), [&](const model::Job& a, const model::Job& b) { return order.Before(a, b); });
  std::vector<std::int32_t> ids;
  for (const model::Job& j : jobs) ids.push_back(j.id.value());
  EXPECT_EQ(ids, (std::vector<std::int32_t>{3, 1, 4, 0, 2}));
}

}  // namespace
}  // namespace tessera::sched
