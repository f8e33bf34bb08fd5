// Micro-benchmarks of the placement plugin on a 25,000-GPU cluster (3,125
// nodes x 8 GPUs, leaves of 32): one decision each, cluster left unchanged.
// Run: build/release/src/sched/sched_placement_benchmark
#include <benchmark/benchmark.h>

#include "base/random.h"
#include "model/cluster_shape.h"
#include "sched/plugins/topology_packing.h"

namespace tessera::sched {
namespace {

model::Cluster MakeCluster(double fill, std::uint64_t seed) {
  // 8 H100s a node, 32 nodes a leaf, 16 leaves a spine (the shape's defaults); one NUMA socket.
  const model::ClusterShape shape{.nodes = 3125, .numa_sockets = 1};
  model::Cluster cluster = *model::Cluster::Build(model::GenerateNodes(shape));
  // Random single GPUs taken until `fill` of the cluster is allocated.
  Rng rng(seed);
  while (static_cast<double>(cluster.allocated().gpu_milli) < fill * static_cast<double>(cluster.capacity().gpu_milli)) {
    const auto gpu = model::GpuId(static_cast<std::int32_t>(rng.Uniform(0, 24999)));
    if (!cluster.gpu(gpu).whole_free()) continue;
    model::TaskPlacement task;
    task.node = cluster.gpu(gpu).node;
    task.gpus.push_back({gpu, 1000, cluster.gpu(gpu).memory});
    cluster.Allocate(task);
  }
  return cluster;
}

model::Job MakeJob(std::int64_t gpu_milli, std::int32_t replicas, model::TopologyConstraint topology) {
  model::Job job;
  job.name = "bench";
  model::TaskGroup group;
  group.name = "worker";
  group.replicas = group.min_replicas = replicas;
  group.request.gpu_milli = gpu_milli;
  group.request.gpu_memory = gpu_milli < 1000 ? (10LL << 30) : 0;
  job.groups.push_back(group);
  job.topology = topology;
  return job;
}

void Run(benchmark::State& state, const model::Job& job, double fill) {
  model::Cluster cluster = MakeCluster(fill, 1);
  TopologyPacking placement(8);
  std::vector<model::TaskPlacement> out;
  for (auto _ : state) {
    out.clear();
    benchmark::DoNotOptimize(placement.Place(job, cluster, PlaceOptions{}, out));
  }
}

void BM_SingleGpu(benchmark::State& state) { Run(state, MakeJob(1000, 1, {}), 0.7); }
void BM_Fraction(benchmark::State& state) { Run(state, MakeJob(250, 1, {}), 0.7); }
void BM_Gang64LeafRequired(benchmark::State& state) {
  Run(state, MakeJob(8000, 8, {model::TopologyLevel::kLeaf, true}), 0.5);
}
void BM_Gang64SingleGpuTasksPreferred(benchmark::State& state) {
  Run(state, MakeJob(1000, 64, {model::TopologyLevel::kLeaf, false}), 0.7);
}

BENCHMARK(BM_SingleGpu);
BENCHMARK(BM_Fraction);
BENCHMARK(BM_Gang64LeafRequired);
BENCHMARK(BM_Gang64SingleGpuTasksPreferred);

}  // namespace
}  // namespace tessera::sched
