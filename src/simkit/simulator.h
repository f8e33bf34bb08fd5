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
#include "simkit/workload.h"

namespace tessera::simkit {

struct SimOptions {
  sched::SchedulerConfig scheduler;
  Seconds cycle_interval = 0;           // 0: a cycle after every batch of simultaneous events
  bool keep_progress_on_preempt = true;
  Seconds sample_interval = 0;          // time-series resolution; 0: every cycle
  std::function<void(double done)> on_progress;  // fraction of jobs ended, called now and then
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
  std::int64_t events = 0;
  std::int64_t cycles = 0;
};

// Runs the workload on `state` (a cluster and its queues, no jobs yet).
Result<SimResult> Simulate(sched::SchedulerState state, const Workload& workload, const SimOptions& options);

}  // namespace tessera::simkit
