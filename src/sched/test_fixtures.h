// Small builders shared by the scheduling core's unit tests: a uniform cluster
// (N nodes x G GPUs, P nodes per leaf; NVLink domains and rack-wide NVLink
// groups through the model::ClusterShape), a one-group job, a SchedulerState
// over the default queue, and a way to put a job into the running state at a
// chosen time. Header-only and test-only: nothing outside *_test.cc includes it.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/quantity.h"
#include "model/cluster.h"
#include "model/cluster_shape.h"
#include "model/job.h"
#include "model/queue.h"
#include "sched/plugins/topology_packing.h"
#include "sched/state.h"

namespace tessera::sched::fixtures {

// The tests' cluster: n nodes x g GPUs of 64 CPUs and 512Gi, one NUMA socket,
// every node under one leaf unless `nodes_per_leaf` says, and one spine.
inline model::ClusterShape Shape(int nodes, int gpus_per_node, int nodes_per_leaf = 0) {
  return model::ClusterShape{.nodes = nodes,
                             .gpus_per_node = gpus_per_node,
                             .cpu_milli = 64'000,
                             .memory = 512 * kGiB,
                             .nodes_per_leaf = nodes_per_leaf > 0 ? nodes_per_leaf : nodes,
                             .leaves_per_spine = nodes,
                             .numa_sockets = 1};
}

inline model::Cluster MakeCluster(const model::ClusterShape& shape) {
  Result<model::Cluster> cluster = model::Cluster::Build(model::GenerateNodes(shape));
  EXPECT_TRUE(cluster.ok()) << cluster.status().message();
  return std::move(cluster).value();
}

inline model::Cluster MakeCluster(int nodes, int gpus_per_node, int nodes_per_leaf = 0) {
  return MakeCluster(Shape(nodes, gpus_per_node, nodes_per_leaf));
}

// The queue QueueTree::Default creates ("default"; the root is 0).
inline constexpr model::QueueId kDefaultQueue{1};

struct JobShape {
  std::string name = "job";
  std::int64_t gpu_milli = 1000;  // per task
  std::int64_t gpu_memory = 0;    // per task: bytes held for a fraction, least per GPU for whole GPUs
  std::int64_t cpu_milli = 1000;
  std::int64_t memory = kGiB;
  std::int32_t replicas = 1;
  std::int32_t min_replicas = 0;  // 0: equal to replicas
  std::int32_t priority = 0;
  model::QueueId queue = kDefaultQueue;
  bool preemptible = true;
  model::TopologyConstraint topology{};
  Seconds walltime = 0;
  Seconds checkpoint_interval = 0;
};

inline model::Job MakeJob(const JobShape& shape) {
  model::Job job;
  job.name = shape.name;
  job.queue = shape.queue;
  job.priority = shape.priority;
  job.preemptible = shape.preemptible;
  job.walltime = shape.walltime;
  job.checkpoint_interval = shape.checkpoint_interval;
  job.topology = shape.topology;
  model::TaskGroup group;
  group.name = "main";
  group.replicas = shape.replicas;
  group.min_replicas = shape.min_replicas > 0 ? shape.min_replicas : shape.replicas;
  group.request.gpu_milli = shape.gpu_milli;
  group.request.gpu_memory = shape.gpu_memory;
  group.request.cpu_milli = shape.cpu_milli;
  group.request.memory = shape.memory;
  job.groups.push_back(std::move(group));
  return job;
}

// `job` made an array job of `range` (Slurm's syntax: "0-99%10").
inline model::Job MakeArray(model::Job job, std::string_view range) {
  Result<model::JobArray> array = model::ParseArrayRange(range);
  EXPECT_TRUE(array.ok()) << array.status().message();
  job.array = std::make_shared<const model::JobArray>(std::move(array).value());
  job.is_array_parent = true;
  return job;
}

// A state over `cluster` with the single default queue guaranteed all of it.
inline SchedulerState MakeState(model::Cluster cluster) {
  model::QueueTree queues = model::QueueTree::Default(cluster.capacity().gpu_milli);
  return SchedulerState(std::move(cluster), std::move(queues));
}

// Whole GPUs `locals` of node `node`, as a placement (for shaping cluster state).
inline model::TaskPlacement WholeGpus(const model::Cluster& cluster, std::int32_t node,
                                      const std::vector<std::int32_t>& locals) {
  model::TaskPlacement task;
  task.node = model::NodeId(node);
  for (std::int32_t local : locals) {
    const model::GpuId gpu = cluster.node(task.node).gpu(local);
    task.gpus.push_back(model::GpuShare{gpu, 1000, cluster.gpu(gpu).memory});
  }
  return task;
}

// A fraction of GPU `local` of node `node`.
inline model::TaskPlacement GpuFraction(const model::Cluster& cluster, std::int32_t node, std::int32_t local,
                                        std::int32_t milli, std::int64_t memory) {
  model::TaskPlacement task;
  task.node = model::NodeId(node);
  task.gpus.push_back(model::GpuShare{cluster.node(task.node).gpu(local), milli, memory});
  return task;
}

// Submits `job` at `start` and binds it where TopologyPacking puts it, so it
// runs from `start`. Returns an invalid id (and fails the test) if it does not fit.
inline model::JobId StartJob(SchedulerState& state, model::Job job, Time start) {
  const model::JobId id = state.Submit(std::move(job), start);
  std::vector<model::TaskPlacement> placements;
  TopologyPacking packing(8);
  if (!packing.Place(state.job(id), state.cluster(), PlaceOptions{}, placements).fits()) {
    ADD_FAILURE() << "job " << state.job(id).name << " does not fit";
    return model::JobId();
  }
  state.Bind(id, std::move(placements), start);
  return id;
}

// Binds `job` (submitted at `start`) on exactly `placements`.
inline model::JobId StartJobOn(SchedulerState& state, model::Job job, std::vector<model::TaskPlacement> placements,
                               Time start) {
  const model::JobId id = state.Submit(std::move(job), start);
  state.Bind(id, std::move(placements), start);
  return id;
}

}  // namespace tessera::sched::fixtures
