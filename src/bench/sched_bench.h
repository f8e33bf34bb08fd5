// The scheduling-core benchmark behind `tessera bench sched`: a generated
// cluster (3,125 nodes x 8 GPUs by default, leaves of 32 nodes) and a
// Philly-like pending mix, measured on one core:
//   * single-GPU placements per second: an allocate-only cycle placing one
//     single-GPU job per GPU on the empty cluster;
//   * gang decision latency: a 64-GPU gang (8 x 8 GPUs, leaf required) placed
//     on a cluster kept about 70% full, the state perturbed between samples;
//   * a full cycle (all actions) over the whole pending mix on the empty
//     cluster, and the steady-state cycle right after it;
//   * the same two cycles with `array_elements` of the pending jobs replaced
//     by one array job of that many one-GPU elements, and, for contrast, by
//     as many separate one-GPU jobs: an array's unstarted elements should
//     cost a cycle nothing, so its cycles cost about what the mix's do;
//   * peak resident memory.
// Every figure is the median over `runs` repetitions.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace tessera::bench {

struct SchedBenchOptions {
  std::int64_t gpus = 25000;
  std::int32_t gpus_per_node = 8;
  std::int32_t nodes_per_leaf = 32;
  std::int32_t leaves_per_spine = 16;
  std::int64_t pending = 100000;
  std::int32_t array_elements = 10000;  // of the pending jobs, as one array (0: no array figures)
  double fill = 0.70;
  int gang_samples = 2000;
  int runs = 5;
  std::uint64_t seed = 1;
};

struct SchedBenchResult {
  std::int64_t nodes = 0;
  std::int64_t gpus = 0;
  std::int64_t pending = 0;
  double single_gpu_placements_per_s = 0;
  double gang_decision_p50_us = 0;
  double gang_decision_p99_us = 0;
  double gang_fit_ratio = 0;      // share of samples where the gang found room
  double fill_achieved = 0;       // allocated share during the gang samples
  double cycle_ms = 0;            // first cycle over the whole pending mix
  std::int64_t cycle_placed = 0;  // jobs that cycle started
  double cycle_fill = 0;          // allocated GPU share after it
  std::map<std::string, std::int64_t> waiting_by_reason;  // after it
  double steady_cycle_ms = 0;     // the next cycle, cluster full
  // The same cycles with array_elements of the pending jobs as one array,
  // and as that many separate one-GPU jobs.
  std::int64_t array_elements = 0;
  double array_cycle_ms = 0, array_steady_cycle_ms = 0;
  std::int64_t array_cycle_placed = 0;
  std::int64_t array_elements_made = 0;  // the array's elements that exist after both cycles
  double separate_cycle_ms = 0, separate_steady_cycle_ms = 0;
  double peak_rss_mb = 0;
};

SchedBenchResult RunSchedBench(const SchedBenchOptions& options);
std::string ToJson(const SchedBenchResult& result);
std::string ToText(const SchedBenchResult& result);

}  // namespace tessera::bench
