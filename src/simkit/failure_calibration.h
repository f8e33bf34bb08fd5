// Calibrating the failure model against Philly's multi-GPU jobs with every
// attempt (../shared/traces/philly-multigpu/jobs.json):
//   [{"id": "application_1506638472019_14199", "num_gpus": 8, "runtime": 3221.05,
//     "submitted_time": "2017-10-07 01:11:39",
//     "attempts": [{"start_time": "2017-10-07 01:12:09", "end_time": "2017-10-07 01:13:23"}, ...]}, ...]
// 3,034 jobs that finished, each of 4 GPUs or more; every attempt but the last
// failed. The observed rate of failed attempts per GPU-hour sets the model's
// rate; the same jobs are then simulated under it, and the share of jobs
// retried, the attempts per job and the gaps between attempts are compared
// (docs/evaluation.md).
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "model/cluster.h"
#include "simkit/simulator.h"
#include "simkit/workload.h"

namespace tessera::simkit {

struct AttemptedJob {
  std::string id;
  std::int64_t gpus = 0;
  Time submit = 0;
  std::vector<std::pair<Time, Time>> attempts;  // start, end; in order
};

// Errors name the file, the job's index and id, and the field.
Result<std::vector<AttemptedJob>> LoadPhillyAttempts(const std::string& path);

// The jobs as a workload, submitted when Philly got them, each running as
// long as its last attempt (the one that succeeded), checkpointing every
// `checkpoint_interval` seconds.
Workload AttemptsWorkload(const std::vector<AttemptedJob>& jobs, const std::string& source, Seconds checkpoint_interval);

struct RetryStats {
  std::int64_t jobs = 0;
  std::array<std::int64_t, 5> attempts{};  // jobs with 1, 2, 3, 4 and 5 or more attempts
  double retried_share = 0;                // jobs with more than one attempt
  double failures_per_gpu_hour = 0;        // failed attempts per GPU-hour run
  double gpu_hours = 0;                    // run, failed attempts included
  // From the end of a failed attempt to the start of the next.
  Seconds gap_p10 = 0, gap_p50 = 0, gap_p90 = 0;
};

RetryStats ObservedRetries(const std::vector<AttemptedJob>& jobs);
RetryStats SimulatedRetries(const SimResult& result);
nlohmann::json ToJson(const RetryStats& stats);

struct Calibration {
  RetryStats observed;
  RetryStats simulated;
  double target_per_gpu_hour = 0;  // the rate the model was fitted to
  FailureModel model;              // what the simulation ran under: the jobs' own faults
};

// Simulates the jobs on `cluster` failing on their own (FailureModel's job
// faults, of `model.job_fault_shape`) at `per_gpu_hour` failures per GPU-hour
// run, or the observed rate when 0: the scale is fitted to the rate. Philly's
// failures are the job's, not the hardware's, so none takes a GPU out of
// service. Jobs must checkpoint: at a constant hazard, Philly's longest gangs
// (64 GPUs for 700 hours) would expect some 85 failures and, restarting from
// scratch, never end.
Result<Calibration> Calibrate(const std::vector<AttemptedJob>& jobs, const std::string& source, const model::Cluster& cluster,
                              FailureModel model, double per_gpu_hour, Seconds checkpoint_interval,
                              const sched::SchedulerConfig& scheduler);

}  // namespace tessera::simkit
