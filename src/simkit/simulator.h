// The trace-driven simulator: replays a workload on a virtual clock through
// the same sched::Scheduler the server runs. Discrete events (submissions, job
// ends, scheduling cycles) are processed in time order; deterministic for a
// given workload and configuration.
//
// Preemption: an evicted job keeps the work up to its last checkpoint (its
// checkpoint interval, or everything when `keep_progress_on_preempt` says jobs
// checkpoint when asked to stop, as Tiresias assumes) and later resumes with
// the rest. What it loses is counted in lost GPU-hours.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "sched/config.h"
#include "sched/state.h"
#include "simkit/burst_model.h"
#include "simkit/workload.h"

namespace tessera::simkit {

// Random hardware interruptions (Poisson in time, uniform over GPUs). Default
// rate: Llama 3's pre-training, 419 unexpected interruptions in 54 days on
// 16,384 GPUs, 58.7% of them GPU faults (Dubey et al., 2024); the others take
// the whole node. A failed GPU or node is out of service until repaired. Its
// jobs restart from their last periodic checkpoint (their checkpoint interval;
// nothing without one), pay `restart_cost` of extra work, and the progress
// lost is counted in lost GPU-hours.
struct FailureModel {
  static constexpr double kLlama3PerGpuHour = 419.0 / (54.0 * 24.0 * 16384.0);
  double per_gpu_hour = 0;    // interruptions per GPU-hour; 0: no failures
  double gpu_share = 0.587;   // share of interruptions that take one GPU, not a node
  Seconds gpu_repair = 4 * 3600;
  Seconds node_repair = 12 * 3600;
  Seconds restart_cost = 0;   // startup and checkpoint loading after every restart
  std::uint64_t seed = 1;
  // The jobs' own failures (crashes, bad configurations), apart from the
  // hardware's: each run of a job fails at a Weibull hazard in its age t,
  // cumulative (t / job_fault_scale)^job_fault_shape, whatever its size (a
  // bad configuration crashes a gang of 64 GPUs as surely as one of 4), and
  // takes no GPU out of service. Shape 1 is a constant hazard; below 1, a run
  // is most likely to fail early, as a misconfigured one does. 0 scale: none.
  double job_fault_scale = 0;  // seconds
  double job_fault_shape = 1.0;
};

struct SimOptions {
  sched::SchedulerConfig scheduler;
  Seconds cycle_interval = 0;           // 0: a cycle after every batch of simultaneous events
  bool keep_progress_on_preempt = true;
  Seconds sample_interval = 0;          // time-series resolution; 0: every cycle
  std::function<void(double done)> on_progress;  // fraction of jobs ended, called now and then
  FailureModel failures;
  Seconds max_burst = 300;  // how long a vGPU burst may last (the agent's --max-burst)
};

struct JobRecord {
  std::string name, queue, group;
  Time submit = 0;
  Time first_start = -1;  // -1: never started
  Time end = -1;          // -1: never finished
  Seconds duration = 0;   // true run time
  Seconds ran = 0;        // time spent running, lost work included
  std::int64_t gpu_milli = 0;
  std::int32_t preemptions = 0;
  std::int32_t failures = 0;  // restarts after a hardware interruption
};

struct Sample {
  Time time = 0;
  std::int64_t allocated_milli = 0;
  std::int64_t pending = 0;
  std::int64_t running = 0;
};

struct SimResult {
  std::vector<JobRecord> jobs;
  std::vector<Sample> series;
  std::int64_t capacity_milli = 0;
  // GPU-seconds integrated while at least one job was pending.
  double allocated_while_pending = 0;
  double capacity_while_pending = 0;
  double lost_gpu_seconds = 0;
  std::int64_t preemptions = 0;
  std::int64_t failures = 0;  // hardware interruptions injected
  std::vector<Seconds> restart_gaps;  // from an interruption to the job's next start
  BurstStats bursts;          // vGPU memory bursts (simkit/burst_model.h)
  std::int64_t events = 0;
  std::int64_t cycles = 0;
};

// Runs the workload on `state` (a cluster and its queues, no jobs yet).
Result<SimResult> Simulate(sched::SchedulerState state, const Workload& workload, const SimOptions& options);

}  // namespace tessera::simkit
