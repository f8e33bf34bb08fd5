#include "cli/recorded_workload.h"

#include <gtest/gtest.h>

#include "api/agent_protocol.h"

namespace tessera::cli {
namespace {

using nlohmann::json;

constexpr std::int64_t kSince = 1'000'000;

std::string Spec(int gpus, const std::string& extra = "") {
  return "apiVersion: tessera/v1\nkind: Job\nmetadata: {name: j}\nspec:\n" + extra + "  tasks: [{name: m, resources: {gpus: " +
         std::to_string(gpus) + "}, command: [sleep, '1']}]\n";
}

json Job(const std::string& name, std::int64_t submit, std::int64_t running, std::int64_t end, const std::string& spec) {
  return {{"id", 1}, {"name", name}, {"queue", "research"}, {"user", "alice"}, {"state", "succeeded"},
          {"submitTime", submit}, {"runningTime", running}, {"endTime", end}, {"spec", spec}};
}

json Record(json jobs) {
  api::NodeInventory node;
  node.name = "n1";
  node.cpu_milli = 64'000;
  node.memory = std::int64_t{256} << 30;
  for (int i = 0; i < 4; ++i) node.gpus.push_back({i, "GPU-" + std::to_string(i), "H100", std::int64_t{80} << 30, i / 2, 0});
  return {{"time", kSince + 3'600'000},
          {"nodes", {api::ToJson(node)}},
          {"queues", {{"apiVersion", "tessera/v1"}, {"kind", "QueueTree"},
                      {"spec", {{"queues", {{{"name", "research"}, {"guaranteed", "2500m"}, {"weight", 1}}}}}}}},
          {"scheduler", "apiVersion: tessera/v1\nkind: SchedulerConfig\nspec: {jobOrder: fifo}\n"},
          {"unfinishedJobs", 2},
          {"jobs", std::move(jobs)}};
}

TEST(RecordedWorkloadTest, JobsInTheWindowReplayAsTheyRanAndEarlierOnesAreHistory) {
  const json record = Record({Job("late", kSince + 60'000, kSince + 70'000, kSince + 100'400, Spec(2)),
                              Job("early", kSince + 5'000, kSince + 5'000, kSince + 6'000, Spec(1)),
                              Job("before", 10'000, 20'000, 50'000, Spec(4)),
                              Job("straddles", kSince - 1, kSince, kSince + 1'000, Spec(1)),
                              Job("never", kSince + 1, 0, kSince + 2, Spec(1)),
                              Job("element", kSince + 9'000, kSince + 9'000, kSince + 12'000, Spec(1, "  array: \"0-3\"\n"))});
  Result<RecordedCluster> r = ReadClusterRecord(record, kSince);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->nodes.size(), 1u);
  EXPECT_EQ(r->nodes[0].gpus, 4);
  EXPECT_EQ(r->nodes[0].gpu_numa, (std::vector<std::int32_t>{0, 0, 1, 1}));
  ASSERT_EQ(r->queues.size(), 1u);
  EXPECT_EQ(r->queues[0].guaranteed_milli, 2500);
  EXPECT_EQ(r->scheduler.job_order, "fifo");
  EXPECT_EQ(r->unfinished, 2);
  EXPECT_EQ(r->straddling, 1);
  EXPECT_EQ(r->never_ran, 1);
  // In submission order, seconds after `since`, each as long as its run.
  ASSERT_EQ(r->workload.jobs.size(), 3u);
  EXPECT_EQ(r->workload.jobs[0].job.name, "early");
  EXPECT_EQ(r->workload.jobs[0].submit, 5);
  EXPECT_EQ(r->workload.jobs[0].duration, 1);
  EXPECT_EQ(r->workload.jobs[1].job.name, "element");
  EXPECT_FALSE(r->workload.jobs[1].job.is_array_parent);  // an element runs its array's spec as one job
  EXPECT_EQ(r->workload.jobs[1].duration, 3);
  EXPECT_EQ(r->workload.jobs[2].job.name, "late");
  EXPECT_EQ(r->workload.jobs[2].submit, 60);
  EXPECT_EQ(r->workload.jobs[2].duration, 30);
  EXPECT_EQ(r->workload.jobs[2].job.TotalRequest().gpu_milli, 2000);
  EXPECT_EQ(r->workload.jobs[2].queue, "research");
  ASSERT_EQ(r->workload.history.size(), 1u);
  EXPECT_EQ(r->workload.history[0].job.name, "before");
}

TEST(RecordedWorkloadTest, ADamagedRecordIsNamedNotMisread) {
  json record = Record({Job("a", kSince, kSince, kSince + 1000, "kind: Job\nspec: [")});
  Result<RecordedCluster> r = ReadClusterRecord(record, kSince);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("jobs[0]: "), std::string::npos) << r.status().message();
  record = Record({Job("a", kSince, kSince, kSince + 1000, Spec(1))});
  record["jobs"][0]["endTime"] = "soon";
  r = ReadClusterRecord(record, kSince);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("jobs[0].endTime"), std::string::npos) << r.status().message();
  record.erase("queues");
  EXPECT_FALSE(ReadClusterRecord(record, kSince).ok());
}

}  // namespace
}  // namespace tessera::cli
