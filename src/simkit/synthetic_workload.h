// A synthetic workload with the shape of Microsoft's Philly trace (Jeon et al.,
// ATC'19): mostly single-GPU jobs, some 2-8 GPU jobs on one node, a few large
// gangs of 16-512 GPUs, and (as in Alibaba's 2023 GPU-sharing trace) a fifth of
// the jobs asking for a fraction of a GPU. Durations are log-normal with a
// heavy tail; walltime estimates over-estimate durations, as users do.
// Deterministic for a given seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/job.h"
#include "model/queue.h"

namespace tessera::simkit {

struct SyntheticMix {
  double fractional = 0.20;    // 0.25 or 0.5 of a GPU with a memory cap
  double single_gpu = 0.55;
  double multi_gpu = 0.21;     // 2, 4 or 8 GPUs in one task
  double large_gang = 0.04;    // 2-64 tasks of 8 GPUs (16-512 GPUs)
  double high_priority = 0.10; // priority 100 instead of 0
  double non_preemptible = 0.05;
  std::int64_t gpu_memory = 80LL << 30;  // of the cluster's GPUs, to size fractions
};

struct GeneratedJob {
  model::Job job;
  Seconds duration = 0;  // the true duration, for simulations
};

// `queues` lists the leaf queues jobs are spread over (uniformly).
std::vector<GeneratedJob> GenerateWorkload(std::size_t count, const std::vector<model::QueueId>& queues,
                                           const SyntheticMix& mix, std::uint64_t seed);

}  // namespace tessera::simkit
