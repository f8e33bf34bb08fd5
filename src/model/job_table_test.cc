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

// An array job of `range` over ElasticGang's shape.
Job Array(std::string name, std::string_view range) {
  Job job = ElasticGang(std::move(name));
  job.array = std::make_shared<const JobArray>(*ParseArrayRange(range));
  job.is_array_parent = true;
  return job;
}

TEST(JobTableTest, AnArrayReservesItsElementsIdsAndMakesThemAsTheyStart) {
  JobTable table;
  const JobId array = table.Add(Array("sweep", "0-9%3"));
  const JobId later = table.Add(ElasticGang("later"));
  EXPECT_EQ(later, JobId(array.value() + 11));  // 10 ids kept for the elements
  EXPECT_EQ(table.size(), 2u);                   // none made yet
  EXPECT_THAT(table.pending(), UnorderedElementsAre(array, later));

  const JobId first = table.Spawn(array);
  EXPECT_EQ(first, ArrayElementId(array, 0));
  EXPECT_EQ(table.at(first).array_index, 0);
  EXPECT_EQ(table.at(first).array_parent, array);
  EXPECT_EQ(table.at(first).state, JobState::kPending);
  EXPECT_TRUE(table.at(array).CanSpawn());
  table.SetState(first, JobState::kRunning);
  table.Spawn(array);
  table.Spawn(array);
  EXPECT_FALSE(table.at(array).CanSpawn());  // 3 active: its limit
  EXPECT_EQ(table.at(array).array_progress.active(), 3);
  EXPECT_EQ(table.at(array).state, JobState::kPending);  // elements are left to start
  EXPECT_EQ(table.FindByName("sweep"), array);         // never an element
  table.SetState(first, JobState::kSucceeded);
  EXPECT_TRUE(table.at(array).CanSpawn());
  EXPECT_EQ(table.at(array).array_progress[JobState::kSucceeded], 1);
}

TEST(JobTableTest, AnArrayFollowsItsElementsToItsEnd) {
  JobTable table;
  const JobId array = table.Add(Array("a", "4,7"));
  const JobId e4 = table.Spawn(array);
  const JobId e7 = table.Spawn(array);
  EXPECT_EQ(table.at(e7).array_index, 7);
  table.SetState(e4, JobState::kRunning);
  table.SetState(e7, JobState::kRunning);
  // Every element started: the array runs, in neither set (it holds nothing).
  EXPECT_EQ(table.at(array).state, JobState::kRunning);
  EXPECT_THAT(table.pending(), ElementsAre());
  EXPECT_THAT(table.running(), UnorderedElementsAre(e4, e7));
  table.SetState(e4, JobState::kSucceeded);
  EXPECT_EQ(table.at(array).state, JobState::kRunning);
  table.SetState(e7, JobState::kFailed);
  EXPECT_EQ(table.at(array).state, JobState::kFailed);  // one failed: the array failed
}

TEST(JobTableTest, AnElementCancelledBeforeItStartsIsSkipped) {
  JobTable table;
  const JobId array = table.Add(Array("a", "0-2"));
  const JobId second = table.AddEnded(array, 1, JobState::kCancelled);
  EXPECT_EQ(second, ArrayElementId(array, 1));
  EXPECT_EQ(table.Spawn(array), ArrayElementId(array, 0));
  EXPECT_EQ(table.Spawn(array), ArrayElementId(array, 2));  // 1 was cancelled
  EXPECT_FALSE(table.at(array).CanSpawn());
  for (const JobId e : {ArrayElementId(array, 0), ArrayElementId(array, 2)}) table.SetState(e, JobState::kSucceeded);
  EXPECT_EQ(table.at(array).state, JobState::kCancelled);
}

TEST(JobTableTest, UnspawnTakesBackTheLastElementAndItsPosition) {
  JobTable table;
  const JobId array = table.Add(Array("a", "0-3"));
  table.AddEnded(array, 1, JobState::kCancelled);
  const JobId e0 = table.Spawn(array);
  const JobId e2 = table.Spawn(array);
  table.Unspawn(e2);
  EXPECT_FALSE(table.contains(e2));
  EXPECT_EQ(table.at(array).array_progress.created(), 2);
  EXPECT_EQ(table.Spawn(array), e2);  // the same element again
  table.Unspawn(e2);
  table.Unspawn(e0);
  EXPECT_EQ(table.Spawn(array), e0);
}

TEST(JobTableTest, AnArrayPutBackCountsItsElementsAgain) {
  JobTable table;
  const JobId array = table.Add(Array("a", "0-3"));
  table.SetState(table.Spawn(array), JobState::kSucceeded);
  table.SetState(table.Spawn(array), JobState::kRunning);
  table.Add(ElasticGang("later"));
  JobTable rebuilt;
  for (const Job& job : table.all()) rebuilt.Put(job);
  const Job& again = rebuilt.at(array);
  EXPECT_EQ(again.array_progress.created(), 2);
  EXPECT_EQ(again.array_progress[JobState::kSucceeded], 1);
  EXPECT_EQ(again.array_progress.active(), 1);
  EXPECT_EQ(again.state, JobState::kPending);
  EXPECT_EQ(rebuilt.Spawn(array), ArrayElementId(array, 2));
  EXPECT_EQ(rebuilt.next_id(), table.next_id());
}

TEST(JobTableTest, ForgettingAnArrayTakesItsElementsAndKeepsNamesRight) {
  JobTable table;
  const JobId old = table.Add(ElasticGang("a"));
  table.SetState(old, JobState::kSucceeded);
  const JobId array = table.Add(Array("a", "0-1"));
  const JobId e0 = table.Spawn(array);
  const JobId e1 = table.Spawn(array);
  table.SetState(e0, JobState::kSucceeded);
  table.SetState(e1, JobState::kSucceeded);
  ASSERT_EQ(table.at(array).state, JobState::kSucceeded);
  table.Forget({array, e0, e1});
  EXPECT_EQ(table.FindByName("a"), old);  // an element never stands for the name
  EXPECT_EQ(table.size(), 1u);
}

}  // namespace
}  // namespace tessera::model
