#include "simkit/synthetic_workload.h"

#include <algorithm>
#include <cmath>

#include "base/random.h"

namespace tessera::simkit {

std::vector<GeneratedJob> GenerateWorkload(std::size_t count, const std::vector<model::QueueId>& queues,
                                           const SyntheticMix& mix, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<GeneratedJob> jobs;
  jobs.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    GeneratedJob g;
    model::Job& job = g.job;
    job.name = "job-" + std::to_string(i);
    job.queue = queues[static_cast<std::size_t>(rng.Uniform(0, static_cast<std::int64_t>(queues.size()) - 1))];
    job.priority = rng.Bernoulli(mix.high_priority) ? 100 : 0;
    job.preemptible = !rng.Bernoulli(mix.non_preemptible);
    model::TaskGroup group;
    group.name = "main";
    model::TaskRequest& r = group.request;
    const double kind = rng.UniformReal();
    if (kind < mix.fractional) {
      r.gpu_milli = rng.Bernoulli(0.5) ? 250 : 500;
      r.gpu_memory = mix.gpu_memory * r.gpu_milli / 1000;
    } else if (kind < mix.fractional + mix.single_gpu) {
      r.gpu_milli = 1000;
    } else if (kind < mix.fractional + mix.single_gpu + mix.multi_gpu) {
      static constexpr std::int64_t kSizes[] = {2, 4, 8};
      r.gpu_milli = 1000 * kSizes[rng.Uniform(0, 2)];
    } else {
      r.gpu_milli = 8000;
      group.replicas = static_cast<std::int32_t>(std::pow(2, rng.Uniform(1, 6)));  // 2..64 nodes
      job.topology = {model::TopologyLevel::kLeaf, false};
    }
    group.min_replicas = group.replicas;
    r.cpu_milli = std::max<std::int64_t>(1000, r.gpu_milli * 8);
    r.memory = std::max<std::int64_t>(8LL << 30, r.gpu_milli * (64LL << 20));
    job.groups.push_back(std::move(group));
    // Philly's median job runs minutes, its tail days.
    g.duration = static_cast<Seconds>(std::clamp(rng.LogNormal(6.5, 1.8), 30.0, 14.0 * 86400));
    job.walltime = static_cast<Seconds>(static_cast<double>(g.duration) * (1.0 + rng.UniformReal() * 2.0));
    job.checkpoint_interval = rng.Bernoulli(0.5) ? 1800 : 0;
    jobs.push_back(std::move(g));
  }
  return jobs;
}

}  // namespace tessera::simkit
