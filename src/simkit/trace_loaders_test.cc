// The Philly CSV and JSON-lines loaders: what they read, and that every
// malformed row is an error naming file:line and the reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <cstdlib>
#include <fstream>

#include "base/quantity.h"
#include "model/cluster.h"
#include "simkit/alibaba_trace.h"
#include "simkit/jsonl_trace.h"
#include "simkit/philly_trace.h"

namespace tessera::simkit {
namespace {

class TraceFile {
 public:
  explicit TraceFile(const std::string& text) {
    static int serial = 0;
    path_ = (std::filesystem::temp_directory_path() / ("tessera_trace_" + std::to_string(getpid()) + "_" + std::to_string(serial++))).string();
    std::ofstream(path_) << text;
  }
  ~TraceFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

constexpr const char* kHeader = "timestamp,duration,num_gpus,gpu_time,cluster\n";

TEST(PhillyTraceTest, ReadsJobsSortedAndTurnsBigJobsIntoGangs) {
  TraceFile file(std::string(kHeader) +
                 "2017-10-01 00:10:00,600.0,16,9600.0,vc1\n"
                 "2017-10-01 00:00:00,60.4,1,60.4,vc1\n"
                 "2017-10-01 00:05:00,100,12,1200,vc2\n");
  auto workload = LoadPhillyCsv(file.path(), {});
  ASSERT_TRUE(workload.ok()) << workload.status().message();
  ASSERT_EQ(workload->jobs.size(), 3u);
  EXPECT_EQ(workload->jobs[0].submit, 0);    // offsets from the first job
  EXPECT_EQ(workload->jobs[0].duration, 60);
  EXPECT_EQ(workload->jobs[1].submit, 300);
  EXPECT_EQ(workload->jobs[1].job.groups.size(), 2u);  // 12 GPUs: 8 + 4
  EXPECT_EQ(workload->jobs[1].job.groups[0].request.gpu_milli, 8000);
  EXPECT_EQ(workload->jobs[1].job.groups[1].request.gpu_milli, 4000);
  EXPECT_EQ(workload->jobs[2].job.groups[0].replicas, 2);  // 16 GPUs: 2 x 8
  EXPECT_EQ(workload->jobs[2].group, "vc1");
}

TEST(PhillyTraceTest, WindowVcsAndLoad) {
  TraceFile file(std::string(kHeader) +
                 "2017-09-30 23:59:59,10,1,10,vc1\n"
                 "2017-10-01 00:00:00,10,1,10,vc1\n"
                 "2017-10-01 01:00:00,10,1,10,vc2\n"
                 "2017-10-01 02:00:00,10,1,10,vc1\n"
                 "2017-10-02 00:00:00,10,1,10,vc1\n");
  PhillyOptions options;
  options.window_start = *ParseTimestamp("2017-10-01 00:00:00");
  options.window_end = *ParseTimestamp("2017-10-02 00:00:00");
  options.vcs = {"vc1"};
  options.load = 4;
  auto workload = LoadPhillyCsv(file.path(), options);
  ASSERT_TRUE(workload.ok()) << workload.status().message();
  ASSERT_EQ(workload->jobs.size(), 2u);
  EXPECT_EQ(workload->jobs[0].submit, 0);
  EXPECT_EQ(workload->jobs[1].submit, 7200 / 4);
}

// Jobs that ended before the window are the history the cluster starts
// with; one still running when it opens is neither simulated nor history.
TEST(PhillyTraceTest, JobsThatEndedBeforeTheWindowAreItsHistory) {
  TraceFile file(std::string(kHeader) +
                 "2017-09-30 22:00:00,3600,2,7200,vc1\n"    // ended 23:00: history
                 "2017-09-30 23:30:00,3600,1,3600,vc1\n"    // still running at 00:00
                 "2017-09-30 20:00:00,60,1,60,vc2\n"        // another VC's
                 "2017-10-01 00:00:00,10,1,10,vc1\n");
  PhillyOptions options;
  options.window_start = *ParseTimestamp("2017-10-01 00:00:00");
  options.vcs = {"vc1"};
  auto workload = LoadPhillyCsv(file.path(), options);
  ASSERT_TRUE(workload.ok()) << workload.status().message();
  ASSERT_EQ(workload->jobs.size(), 1u);
  ASSERT_EQ(workload->history.size(), 1u);
  EXPECT_EQ(workload->history[0].duration, 3600);
  EXPECT_EQ(workload->history[0].job.MinGpuMilli(), 2000);
}

TEST(PhillyTraceTest, MalformedRowsNameFileLineAndReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"2017-10-01 00:00:00,10,1,10\n", ":2: expected 5 fields, got 4"},
      {"2017-13-01 00:00:00,10,1,10,vc\n", ":2: '2017-13-01 00:00:00' is not a timestamp"},
      {"2017-10-01 00:00:00,-5,1,10,vc\n", ":2: duration '-5' is not a non-negative number"},
      {"2017-10-01 00:00:00,10,1.5,10,vc\n", ":2: num_gpus '1.5' is not a positive integer"},
      {"2017-10-01 00:00:00,10,0,10,vc\n", ":2: num_gpus '0' is not a positive integer"},
      {"2017-10-01 00:00:00,10,1,10,\n", ":2: cluster (the VC) is empty"},
  };
  for (const auto& [row, expected] : cases) {
    TraceFile file(std::string(kHeader) + "2017-10-01 00:00:00,10,1,10,ok\n" + "" + row);
    auto workload = LoadPhillyCsv(file.path(), {});
    ASSERT_FALSE(workload.ok()) << row;
    // The bad row is line 3 (header, one good row, then it).
    std::string want = expected;
    want.replace(want.find(":2:"), 3, ":3:");
    EXPECT_NE(workload.status().message().find(file.path() + want), std::string::npos) << workload.status().message();
  }
  TraceFile header("time,duration\n");
  EXPECT_NE(LoadPhillyCsv(header.path(), {}).status().message().find(":1: expected the header"), std::string::npos);
  EXPECT_EQ(LoadPhillyCsv("/nonexistent/philly.csv", {}).status().code(), StatusCode::kNotFound);
}

TEST(JsonLinesTraceTest, ReadsJobs) {
  TraceFile file(
      "# a comment\n"
      "{\"name\": \"b\", \"submit\": \"2m\", \"duration\": 3600, \"gpus\": 8, \"tasks\": 2, \"topology\": \"leaf\", "
      "\"topologyMode\": \"required\", \"queue\": \"research\", \"priority\": 5, \"walltime\": \"2h\"}\n"
      "\n"
      "{\"name\": \"a\", \"submit\": 0, \"duration\": 60, \"gpus\": 0.25, \"gpuMemory\": \"10Gi\"}\n");
  auto workload = LoadJsonLines(file.path());
  ASSERT_TRUE(workload.ok()) << workload.status().message();
  ASSERT_EQ(workload->jobs.size(), 2u);
  const WorkloadJob& a = workload->jobs[0];
  EXPECT_EQ(a.job.name, "a");
  EXPECT_EQ(a.job.groups[0].request.gpu_milli, 250);
  const WorkloadJob& b = workload->jobs[1];
  EXPECT_EQ(b.submit, 120);
  EXPECT_EQ(b.queue, "research");
  EXPECT_EQ(b.job.groups[0].replicas, 2);
  EXPECT_EQ(b.job.walltime, 7200);
  EXPECT_TRUE(b.job.topology.required);
  EXPECT_EQ(b.job.topology.level, model::TopologyLevel::kLeaf);
}

TEST(JsonLinesTraceTest, MalformedLinesNameFileLineAndReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"name\": \"x\", \"submit\": 0, \"duration\": 5, \"gpus\": 1", ":2: malformed JSON"},
      {"{\"name\": \"x\", \"submit\": 0, \"duration\": 5, \"gpus\": 1, \"gpu\": 2}", ":2: gpu: unknown field"},
      {"{\"name\": \"x\", \"submit\": 0, \"gpus\": 1}", ":2: duration: required field is missing"},
      {"{\"name\": \"x\", \"submit\": 0, \"duration\": 5, \"gpus\": 1.5}", ":2: gpus: above one GPU, ask for whole GPUs"},
      {"{\"name\": \"x\", \"submit\": 0, \"duration\": \"soon\", \"gpus\": 1}", ":2: duration: 'soon' is not a duration"},
      {"{\"name\": \"x\", \"submit\": 0, \"duration\": 5, \"gpus\": 1, \"tasks\": 0}", ":2: tasks: expected an integer of at least 1"},
      {"[1, 2]", ":2: expected a JSON object"},
  };
  for (const auto& [line, expected] : cases) {
    TraceFile file("{\"name\": \"ok\", \"submit\": 0, \"duration\": 5, \"gpus\": 1}\n" + line + "\n");
    auto workload = LoadJsonLines(file.path());
    ASSERT_FALSE(workload.ok()) << line;
    EXPECT_NE(workload.status().message().find(file.path() + expected), std::string::npos) << workload.status().message();
  }
}

}  // namespace
}  // namespace tessera::simkit

namespace tessera::simkit {
namespace {

constexpr const char* kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

TEST(AlibabaTraceTest, ReadsTheFormatSample) {
  const char* root = std::getenv("TESSERA_SOURCE_DIR");
  const std::string dir = std::string(root ? root : ".") + "/../shared/traces/alibaba-2023-format/";
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << "no shared traces beside the checkout";
  auto nodes = LoadAlibabaNodes(dir + "nodes-sample.csv");
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  EXPECT_EQ(nodes->size(), 20u);
  EXPECT_EQ(nodes->front().gpu_model, "P100");
  EXPECT_EQ(nodes->front().gpus, 2);
  EXPECT_EQ(nodes->front().memory, 262144LL * kMiB);
  auto pods = LoadAlibabaPods(dir + "pods-sample.csv");
  ASSERT_TRUE(pods.ok()) << pods.status().message();
  EXPECT_EQ(pods->jobs.size(), 40u);
  EXPECT_TRUE(model::Cluster::Build(*nodes).ok());
}

TEST(AlibabaTraceTest, PodsBecomeTasks) {
  TraceFile file(std::string(kPodHeader) +
                 "p-frac,6000,12288,1,460,,LS,Running,100,5000,150\n"
                 "p-whole,12000,16384,8,1000,V100M16|V100M32,BE,Succeeded,0,900,10\n"
                 "p-cpu,4000,8192,0,0,,LS,Running,50,,60\n");
  auto pods = LoadAlibabaPods(file.path());
  ASSERT_TRUE(pods.ok()) << pods.status().message();
  ASSERT_EQ(pods->jobs.size(), 3u);
  const WorkloadJob& whole = pods->jobs[0];  // sorted by creation time
  EXPECT_EQ(whole.job.groups[0].request.gpu_milli, 8000);
  EXPECT_EQ(whole.job.groups[0].request.gpu_model, "V100M16|V100M32");
  EXPECT_EQ(whole.duration, 890);
  EXPECT_EQ(whole.group, "BE");
  const WorkloadJob& cpu = pods->jobs[1];
  EXPECT_EQ(cpu.job.groups[0].request.gpu_milli, 0);
  EXPECT_EQ(cpu.duration, 5000 - 60);  // still running: until the trace's last deletion
  const WorkloadJob& frac = pods->jobs[2];
  EXPECT_EQ(frac.job.groups[0].request.gpu_milli, 460);
  EXPECT_EQ(frac.job.groups[0].request.cpu_milli, 6000);
  EXPECT_EQ(frac.job.groups[0].request.memory, 12288LL * kMiB);
  EXPECT_EQ(frac.submit, 100);
  EXPECT_EQ(frac.duration, 4850);
}

TEST(AlibabaTraceTest, MalformedRowsNameFileLineAndReason) {
  const std::vector<std::pair<std::string, std::string>> pod_cases = {
      {"p,1000,1024,1,1001,,LS,Running,0,10,0", ":3: gpu_milli 1001 is not a share of one GPU"},
      {"p,1000,1024,2,500,,LS,Running,0,10,0", ":3: gpu_milli 500 with 2 GPUs: whole GPUs are 1000"},
      {"p,1000,1024,0,300,,LS,Running,0,10,0", ":3: gpu_milli 300 for a pod without GPUs"},
      {"p,x,1024,1,500,,LS,Running,0,10,0", ":3: cpu_milli 'x' is not a non-negative integer"},
      {"p,1000,1024,1,500,,LS,Running,20,10,15", ":3: deletion_time is before the pod started"},
      {"p,1000,1024,1,500,,LS,Running,0,10", ":3: expected 11 fields, got 10"},
  };
  for (const auto& [row, expected] : pod_cases) {
    TraceFile file(std::string(kPodHeader) + "ok,1000,1024,1,500,,LS,Running,0,10,0\n" + row + "\n");
    auto pods = LoadAlibabaPods(file.path());
    ASSERT_FALSE(pods.ok()) << row;
    EXPECT_NE(pods.status().message().find(file.path() + expected), std::string::npos) << pods.status().message();
  }
  TraceFile nodes("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\nn1,64000,262144,2,\n");
  EXPECT_NE(LoadAlibabaNodes(nodes.path()).status().message().find(":3: model is empty for a node with GPUs"), std::string::npos);
  TraceFile header("sn,cpu,gpu\n");
  EXPECT_NE(LoadAlibabaNodes(header.path()).status().message().find(":1: expected the header"), std::string::npos);
}

}  // namespace
}  // namespace tessera::simkit
