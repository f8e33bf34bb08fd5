// Idle-GPU accounting (docs/observability.md): from the GPU utilization each
// agent reports with its heartbeat, how many GPU-seconds a run held and how
// many of them its GPUs sat idle.
//
// A task's GPUs are idle while the busiest of them stays under the
// threshold. Idle time counts only once a streak has lasted the window (a
// data loader between epochs is not idleness); then the whole streak counts.
// A gap between two reports longer than `max_gap_ms` (a lost heartbeat, a
// server restart) is counted as `max_gap_ms` at most, never guessed.
//
// On a GPU shared by several tasks the agent reports the GPU's utilization,
// so a fraction is idle only when the whole GPU is.
#pragma once

#include <cstdint>

namespace tessera::controlplane {

struct IdlePolicy {
  double threshold_percent = 1.0;
  std::int64_t window_ms = 5 * 60'000;
  std::int64_t max_gap_ms = 10'000;
  std::int64_t warn_after_ms = 0;     // 0: never warn
  std::int64_t reclaim_after_ms = 0;  // 0: never reclaim
};

// What the meter remembers of one task between reports.
struct TaskMeter {
  std::int64_t last_ms = -1;       // -1: no report yet
  std::int64_t idle_since_ms = -1;  // -1: busy
};

struct UsageDelta {
  double gpu_seconds = 0;
  double idle_gpu_seconds = 0;
};

// One report for a task holding `gpus` GPUs (fractions by their share) whose
// busiest GPU was `utilization` percent busy.
UsageDelta Observe(TaskMeter& meter, double gpus, double utilization, std::int64_t now_ms, const IdlePolicy& policy);

// How long the task's GPUs have been idle at `now_ms` (0: busy).
inline std::int64_t IdleFor(const TaskMeter& meter, std::int64_t now_ms) {
  return meter.idle_since_ms < 0 ? 0 : now_ms - meter.idle_since_ms;
}

}  // namespace tessera::controlplane
