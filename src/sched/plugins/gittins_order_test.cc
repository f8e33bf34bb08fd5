#include "sched/plugins/gittins_order.h"

#include <gtest/gtest.h>

namespace tessera::sched {
namespace {

const model::QueueId kQueue(0);

model::Job Pending(std::int32_t id, std::int64_t gpu_milli, double attained_gpu_seconds = 0) {
  model::Job job;
  job.id = model::JobId(id);
  job.queue = kQueue;
  model::TaskGroup group;
  group.name = "worker";
  group.request.gpu_milli = gpu_milli;
  job.groups.push_back(group);
  job.attained_gpu_seconds = attained_gpu_seconds;
  return job;
}

void RecordRuns(RunTimeHistory& history, std::int64_t gpu_milli, Seconds ran, int count) {
  for (int i = 0; i < count; ++i) history.Record(kQueue, gpu_milli, ran);
}

TEST(GittinsOrderTest, InverseIndexOfOneKnownDurationIsTheTimeLeft) {
  RunTimeDistribution d;
  for (int i = 0; i < 10; ++i) d.Add(1000);
  const double value = RunTimeDistribution::BinValue(RunTimeDistribution::BinOf(1000));
  EXPECT_DOUBLE_EQ(GittinsOrder::InverseIndex(d, 0), value);
  EXPECT_DOUBLE_EQ(GittinsOrder::InverseIndex(d, 400), value - 400);
}

TEST(GittinsOrderTest, InverseIndexStopsAtTheFirstLikelyEnd) {
  // 90% of runs end at 100 s, 10% at 100,000 s: the best quantum is to
  // serve 100 s and expect to be done, so 1/G is about 100 / 0.9 + a little,
  // far below the mean of some 10,000 s.
  RunTimeDistribution d;
  for (int i = 0; i < 90; ++i) d.Add(100);
  for (int i = 0; i < 10; ++i) d.Add(100000);
  const double short_value = RunTimeDistribution::BinValue(RunTimeDistribution::BinOf(100));
  EXPECT_NEAR(GittinsOrder::InverseIndex(d, 0), short_value / 0.9, 1.0);
  // Once past the short runs, only the long ones are left: 1/G is the rest of them.
  const double long_value = RunTimeDistribution::BinValue(RunTimeDistribution::BinOf(100000));
  EXPECT_NEAR(GittinsOrder::InverseIndex(d, 200), long_value - 200, 1.0);
}

TEST(GittinsOrderTest, WithoutHistoryEveryJobRanksTheSameSoTheOrderIsFifo) {
  GittinsOrder order({});
  const RunTimeHistory history;
  order.Learn(history);
  const model::Job early = Pending(2, 8000), late = Pending(1, 1000);
  model::Job later = late;
  later.submit_time = 10;
  EXPECT_EQ(order.Rank(early, 0), order.Rank(later, 0));
  EXPECT_TRUE(order.Before(early, later, 0));
  EXPECT_FALSE(order.Displaces(later, early, 0));
}

TEST(GittinsOrderTest, AClassThatUsuallyEndsSoonGoesFirstAndEvictsARunThatOutlivedItsClass) {
  RunTimeHistory history;
  RecordRuns(history, 1000, 300, 20);     // 1-GPU jobs: five minutes
  RecordRuns(history, 8000, 20000, 20);   // 8-GPU jobs: about 5.5 hours
  GittinsOrder order({});
  order.Learn(history);
  model::Job big = Pending(1, 8000);
  const model::Job small = Pending(2, 1000);
  EXPECT_TRUE(order.Before(small, big, 0)) << "submitted later, but its class ends sooner";
  // A 1-GPU job that has run 10 minutes outlived every run of its class: a
  // fresh 1-GPU job evicts it, and the longer it runs the further it sinks,
  // behind the fresh 8-GPU job once it has run a day.
  const model::Job stale = Pending(3, 1000, 600);
  EXPECT_TRUE(order.Displaces(small, stale, 0));
  EXPECT_FALSE(order.Displaces(stale, small, 0));
  EXPECT_TRUE(order.Before(stale, big, 0));
  EXPECT_TRUE(order.Before(big, Pending(4, 1000, 86400), 0));
}

TEST(GittinsOrderTest, EvictsOnlyForAnIndexDisplaceFactorTimesHigher) {
  RunTimeHistory history;
  RecordRuns(history, 1000, 1000, 10);
  RecordRuns(history, 2000, 1500, 10);
  const model::Job a = Pending(1, 1000), b = Pending(2, 2000);
  GittinsOrder strict({.displace_factor = 2});
  strict.Learn(history);
  EXPECT_TRUE(strict.Before(a, b, 0));
  EXPECT_FALSE(strict.Displaces(a, b, 0)) << "1.5 times shorter is not worth a restart at factor 2";
  GittinsOrder eager({.displace_factor = 1.2});
  eager.Learn(history);
  EXPECT_TRUE(eager.Displaces(a, b, 0));
}

TEST(GittinsOrderTest, ARankLearnedEarlierIsNotReusedForANewHistory) {
  GittinsOrder order({});
  RunTimeHistory first;
  RecordRuns(first, 1000, 100, 10);
  order.Learn(first);
  const double before = order.Rank(Pending(1, 1000), 0);
  RunTimeHistory second;
  RecordRuns(second, 1000, 100000, 10);
  order.Learn(second);
  EXPECT_GT(order.Rank(Pending(1, 1000), 0), 100 * before);
}

}  // namespace
}  // namespace tessera::sched
