#include "sched/run_time_history.h"

#include <gtest/gtest.h>

namespace tessera::sched {
namespace {

const model::QueueId kTeam(1);

TEST(RunTimeDistributionTest, BinsAreLogarithmicAndTheirValuesLieWithin) {
  EXPECT_EQ(RunTimeDistribution::BinOf(0), 0);
  EXPECT_LT(RunTimeDistribution::BinOf(60), RunTimeDistribution::BinOf(61 * 2));
  for (double seconds : {1.0, 60.0, 3600.0, 86400.0, 3e6}) {
    const int bin = RunTimeDistribution::BinOf(seconds);
    EXPECT_LE(RunTimeDistribution::BinStart(bin), seconds);
    EXPECT_GT(RunTimeDistribution::BinStart(bin + 1), seconds);
    EXPECT_NEAR(RunTimeDistribution::BinValue(bin) / seconds, 1.0, 0.2);  // within the bin's factor of 2^(1/4)
  }
  EXPECT_EQ(RunTimeDistribution::BinOf(1e12), RunTimeDistribution::kBins - 1);
}

TEST(RunTimeDistributionTest, MeanBeyondIsTheMeanOfTheLongerRuns) {
  RunTimeDistribution d;
  for (int i = 0; i < 9; ++i) d.Add(100);
  d.Add(10000);
  EXPECT_NEAR(d.MeanBeyond(0), (9 * 100 + 10000) / 10.0, 0.2 * 1000);
  EXPECT_NEAR(d.MeanBeyond(500), 10000, 0.2 * 10000);  // past the short runs, only the long one is left
  EXPECT_EQ(d.MeanBeyond(1e6), 2e6);                    // past every run: twice the time run
}

TEST(RunTimeDistributionTest, EveryAddGivesNewContentsANewStampAndACopyKeepsIt) {
  RunTimeDistribution a;
  a.Add(10);
  const RunTimeDistribution copy = a;
  EXPECT_EQ(copy.stamp(), a.stamp());
  a.Add(10);
  EXPECT_NE(copy.stamp(), a.stamp());
  RunTimeDistribution b;
  b.Add(10);
  EXPECT_NE(b.stamp(), copy.stamp()) << "equal contents reached apart must not share a stamp";
}

TEST(RunTimeHistoryTest, FallsBackFromTheClassToTheQueueToTheCluster) {
  RunTimeHistory history;
  EXPECT_EQ(history.For(kTeam, 8000), nullptr);
  for (std::uint64_t i = 0; i < RunTimeHistory::kMinSamples; ++i) history.Record(model::QueueId(2), 1000, 60);
  const RunTimeDistribution* cluster = history.For(kTeam, 8000);
  ASSERT_NE(cluster, nullptr);  // another queue's jobs: the cluster's distribution
  EXPECT_EQ(cluster->total(), RunTimeHistory::kMinSamples);
  for (std::uint64_t i = 0; i < RunTimeHistory::kMinSamples; ++i) history.Record(kTeam, 1000, 600);
  EXPECT_EQ(history.For(kTeam, 8000)->total(), RunTimeHistory::kMinSamples);  // the queue's, of 1-GPU jobs
  EXPECT_EQ(history.For(kTeam, 8000)->count(RunTimeDistribution::BinOf(600)), RunTimeHistory::kMinSamples);
  for (std::uint64_t i = 0; i < RunTimeHistory::kMinSamples; ++i) history.Record(kTeam, 8000, 36000);
  const RunTimeDistribution* own = history.For(kTeam, 8000);
  EXPECT_EQ(own->count(RunTimeDistribution::BinOf(36000)), RunTimeHistory::kMinSamples);
  EXPECT_EQ(own->total(), RunTimeHistory::kMinSamples);  // its own class alone
  EXPECT_EQ(history.For(kTeam, 2000)->total(), 2 * RunTimeHistory::kMinSamples);  // no class of its own: the queue's
}

}  // namespace
}  // namespace tessera::sched
