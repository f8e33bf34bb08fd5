// Philly's retried jobs: the loader (every malformed field named), the
// statistics on both sides, and a calibration run end to end.
#include "simkit/failure_calibration.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "simkit/sources.h"

namespace tessera::simkit {
namespace {

class JsonFile {
 public:
  explicit JsonFile(const std::string& text)
      : path_((std::filesystem::temp_directory_path() / ("tessera_attempts_" + std::to_string(getpid()) + ".json")).string()) {
    std::ofstream(path_) << text;
  }
  ~JsonFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Two jobs: one that succeeded at once, one that failed twice (gaps of 60
// and 120 s) before it succeeded.
constexpr const char* kTwoJobs = R"([
  {"id": "a", "num_gpus": 4, "runtime": 60, "submitted_time": "2017-10-01 00:00:00",
   "attempts": [{"start_time": "2017-10-01 00:00:00", "end_time": "2017-10-01 01:00:00"}]},
  {"id": "b", "num_gpus": 8, "runtime": 200, "submitted_time": "2017-10-01 00:00:00",
   "attempts": [{"start_time": "2017-10-01 00:00:00", "end_time": "2017-10-01 00:30:00"},
                {"start_time": "2017-10-01 00:31:00", "end_time": "2017-10-01 01:01:00"},
                {"start_time": "2017-10-01 01:03:00", "end_time": "2017-10-01 03:03:00"}]}
])";

TEST(FailureCalibrationTest, ObservedRetriesCountAttemptsGapsAndTheRate) {
  JsonFile file(kTwoJobs);
  const auto jobs = LoadPhillyAttempts(file.path());
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  const RetryStats stats = ObservedRetries(*jobs);
  EXPECT_EQ(stats.jobs, 2);
  EXPECT_EQ(stats.attempts, (std::array<std::int64_t, 5>{1, 0, 1, 0, 0}));
  EXPECT_DOUBLE_EQ(stats.retried_share, 0.5);
  EXPECT_DOUBLE_EQ(stats.gpu_hours, 4 * 1.0 + 8 * 3.0);      // every attempt's GPU time
  EXPECT_DOUBLE_EQ(stats.failures_per_gpu_hour, 2.0 / 28.0);  // two failed attempts
  EXPECT_EQ(stats.gap_p10, 60);
  EXPECT_EQ(stats.gap_p90, 120);
  EXPECT_EQ(ToJson(stats)["attempts_1_2_3_4_5plus"], nlohmann::json({1, 0, 1, 0, 0}));
}

TEST(FailureCalibrationTest, TheWorkloadRunsTheLastAttemptAndCheckpoints) {
  JsonFile file(kTwoJobs);
  const Workload workload = AttemptsWorkload(*LoadPhillyAttempts(file.path()), "t", 600);
  ASSERT_EQ(workload.jobs.size(), 2u);
  EXPECT_EQ(workload.jobs[1].duration, 2 * 3600);
  EXPECT_EQ(workload.jobs[1].job.TotalRequest().gpu_milli, 8000);
  EXPECT_EQ(workload.jobs[1].job.checkpoint_interval, 600);
}

TEST(FailureCalibrationTest, MalformedJobsNameTheJobAndTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {"{}", "expected a list of jobs"},
      {"[", "not JSON"},
      {"[]", "no job"},
      {R"([{"id": "x", "num_gpus": 0, "submitted_time": "2017-10-01 00:00:00", "attempts": []}])", "job 0 (x): num_gpus: a positive integer"},
      {R"([{"id": "x", "num_gpus": 4, "submitted_time": "yesterday", "attempts": []}])", "job 0 (x): submitted_time: 'yesterday' is not a timestamp"},
      {R"([{"id": "x", "num_gpus": 4, "submitted_time": "2017-10-01 00:00:00", "attempts": []}])", "job 0 (x): attempts: a non-empty list"},
      {R"([{"id": "x", "num_gpus": 4, "submitted_time": "2017-10-01 00:00:00",
            "attempts": [{"start_time": "2017-10-01 02:00:00", "end_time": "2017-10-01 01:00:00"}]}])",
       "job 0 (x): attempts[0]: ends before it starts"},
      {R"([{"id": "x", "num_gpus": 4, "submitted_time": "2017-10-01 00:00:00",
            "attempts": [{"start_time": "2017-10-01 00:00:00", "end_time": "2017-10-01 01:00:00"},
                         {"start_time": "2017-10-01 00:30:00"}]}])",
       "job 0 (x): attempts[1].end_time: a timestamp is required"},
  };
  for (const auto& [text, want] : cases) {
    JsonFile file(text);
    const auto jobs = LoadPhillyAttempts(file.path());
    ASSERT_FALSE(jobs.ok()) << text;
    EXPECT_NE(jobs.status().message().find(want), std::string::npos) << jobs.status().message();
    EXPECT_EQ(jobs.status().message().rfind(file.path(), 0), 0u) << "the message starts with the file: " << jobs.status().message();
  }
}

TEST(FailureCalibrationTest, SimulatedAtTheObservedRateJobsFailAndRestart) {
  // Forty 8-GPU jobs of 10 hours each at a rate high enough that most fail.
  std::string text = "[";
  for (int i = 0; i < 40; ++i) {
    text += std::string(i ? "," : "") + R"({"id": "j)" + std::to_string(i) +
            R"(", "num_gpus": 8, "submitted_time": "2017-10-01 00:00:00", "attempts": [{"start_time": "2017-10-01 00:00:00", "end_time": "2017-10-01 10:00:00"}]})";
  }
  JsonFile file(text + "]");
  const auto jobs = LoadPhillyAttempts(file.path());
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  Result<model::Cluster> cluster = LoadClusterSource("40 nodes x 8 GPUs");
  ASSERT_TRUE(cluster.ok()) << cluster.status().message();
  const double rate = 0.01;  // 0.8 failures expected per job
  const auto c = Calibrate(*jobs, "t", *cluster, FailureModel{}, rate, 3600, sched::SchedulerConfig{});
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->observed.retried_share, 0) << "the trace's jobs all succeeded at once";
  EXPECT_EQ(c->simulated.jobs, 40);
  EXPECT_GT(c->simulated.retried_share, 0.2);
  EXPECT_NEAR(c->simulated.failures_per_gpu_hour, rate, 0.004);
  // A job of 8 GPUs failing at `rate` per GPU-hour fails every 1 / (8 rate)
  // hours, up to the noise of some 20 failures.
  EXPECT_GT(c->model.job_fault_scale, 0.5 * 3600 / (8 * rate));
  EXPECT_LT(c->model.job_fault_scale, 2 * 3600 / (8 * rate));
  EXPECT_EQ(c->simulated.gap_p50, 0) << "a failure takes no GPU away: the job restarts at once on a free cluster";
  EXPECT_FALSE(Calibrate(*jobs, "t", *cluster, FailureModel{}, rate, 0, {}).ok()) << "without checkpoints long jobs may never end";

  // A falling hazard fitted to the same rate: the rate holds, with a larger
  // scale ((10 h / scale)^0.5 = 10 h / the constant hazard's scale).
  FailureModel early;
  early.job_fault_shape = 0.5;
  const auto e = Calibrate(*jobs, "t", *cluster, early, rate, 3600, sched::SchedulerConfig{});
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_NEAR(e->simulated.failures_per_gpu_hour, rate, 0.004);
  EXPECT_GT(e->model.job_fault_scale, 1.5 * c->model.job_fault_scale);
}

}  // namespace
}  // namespace tessera::simkit
