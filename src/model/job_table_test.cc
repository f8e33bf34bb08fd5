#include "model/job_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessera::model {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

// A gang of 4 workers (at least 2) of 2 GPUs each and one CPU-only launcher.
Job ElasticGang(std::string name) {
  Job job;
  job.name = std::move(name);
  TaskGroup workers;
  workers.replicas = 4;
  workers.min_replicas = 2;
  workers.request.gpu_milli = 2000;
  workers.request.cpu_milli = 8000;
  TaskGroup launcher;
  launcher.request.cpu_milli = 1000;
  job.groups = {workers, launcher};
  return job;
}

TEST(JobTableTest, PendingAndRunningSetsFollowTheJobsState) {
  JobTable table;
  const JobId a = table.Add(ElasticGang("a"));
  const JobId b = table.Add(ElasticGang("b"));
  const JobId c = table.Add(ElasticGang("c"));
  EXPECT_THAT(table.pending(), ElementsAre(a, b, c));
  table.SetState(a, JobState::kRunning);
  table.SetState(b, JobState::kRunning);
  EXPECT_THAT(table.pending(), ElementsAre(c));
  EXPECT_THAT(table.running(), UnorderedElementsAre(a, b));
  table.SetState(a, JobState::kSucceeded);
  table.SetState(c, JobState::kCancelled);
  EXPECT_TRUE(table.pending().empty());
  EXPECT_THAT(table.running(), ElementsAre(b));
  table.SetState(b, JobState::kPending);  // requeued
  EXPECT_THAT(table.pending(), ElementsAre(b));
  EXPECT_TRUE(table.running().empty());
}

TEST(JobTableTest, FindByNameGivesTheLatestJobOfThatName) {
  JobTable table;
  table.Add(ElasticGang("train"));
  const JobId again = table.Add(ElasticGang("train"));
  EXPECT_EQ(table.FindByName("train"), again);
  EXPECT_FALSE(table.FindByName("missing").valid());
}

TEST(JobTableTest, AJobInTheTableRemembersItsMinimumGangAndShape) {
  const Job outside = ElasticGang("a");
  EXPECT_EQ(outside.MinGpuMilli(), 4000);  // computed: 2 workers x 2 GPUs
  JobTable table;
  const JobId a = table.Add(outside);
  EXPECT_EQ(table.at(a).MinGpuMilli(), 4000);
  EXPECT_EQ(table.at(a).MinGpuMilli(), table.at(a).MinRequest().gpu_milli);
  EXPECT_EQ(table.at(a).Shape(), outside.ShapeFingerprint());

  Job bigger = ElasticGang("b");
  bigger.groups[0].min_replicas = 3;
  const JobId b = table.Add(bigger);  // may move every record: look jobs up by id
  EXPECT_EQ(table.at(b).MinGpuMilli(), 6000);
  EXPECT_NE(table.at(b).Shape(), table.at(a).Shape());
}

TEST(JobTableTest, ForgottenJobsLeaveTheTableAndTheirIdsAreNotReused) {
  JobTable table;
  const JobId a = table.Add(ElasticGang("a"));
  const JobId b = table.Add(ElasticGang("b"));
  const JobId c = table.Add(ElasticGang("c"));
  table.SetState(a, JobState::kSucceeded);
  table.SetState(b, JobState::kRunning);
  table.SetState(c, JobState::kFailed);
  table.Forget({c, a});
  EXPECT_FALSE(table.contains(a));
  EXPECT_FALSE(table.contains(c));
  EXPECT_FALSE(table.FindByName("a").valid());
  ASSERT_EQ(table.size(), 1u);
  EXPECT_EQ(table.all().front().id, b);
  EXPECT_THAT(table.running(), ElementsAre(b));
  // The running set still finds b after the storage moved.
  table.SetState(b, JobState::kSucceeded);
  EXPECT_TRUE(table.running().empty());
  EXPECT_EQ(table.Add(ElasticGang("d")).value(), 3);
  // A name whose latest job is forgotten finds the one before it.
  const JobId older = table.Add(ElasticGang("train"));
  const JobId newer = table.Add(ElasticGang("train"));
  table.SetState(newer, JobState::kCancelled);
  table.Forget({newer});
  EXPECT_EQ(table.FindByName("train"), older);
}

TEST(JobTableTest, APutBackJobKeepsItsIdAndSkippedIdsStayTaken) {
  JobTable table;
  table.SkipIds(JobId(10));
  Job job = ElasticGang("restored");
  job.id = JobId(12);
  job.state = JobState::kRunning;
  table.Put(job);
  EXPECT_THAT(table.running(), ElementsAre(JobId(12)));
  EXPECT_EQ(table.at(JobId(12)).MinGpuMilli(), 4000);
  EXPECT_EQ(table.Add(ElasticGang("new")), JobId(13));
}

}  // namespace
}  // namespace tessera::model
