// The Philly CSV and JSON-lines loaders: what they read, and that every
// malformed row is an error naming file:line and the reason.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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
      {"{\"name\": \"x\", \"submit\": 0, \"duration\": 5, \"gpus\": 0.5}", ":2: gpuMemory: a fraction of a GPU needs gpuMemory"},
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
