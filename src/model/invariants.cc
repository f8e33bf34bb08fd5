#include "model/invariants.h"

#include <unordered_map>

namespace tessera::model {
namespace {

struct Expected {
  std::vector<std::int64_t> gpu_milli, gpu_memory, node_cpu, node_memory;
  std::vector<Resources> queue_own;
  std::vector<std::int64_t> queue_pinned;  // non-preemptible GPUs of each queue's own jobs
};

void CheckJob(const Cluster& cluster, const Job& job, Expected& expected, std::vector<std::string>& out) {
  const std::string who = "job " + job.name + ": ";
  if (job.state != JobState::kRunning || job.is_array_parent) {
    if (!job.placements.empty() || job.Held() != Resources{}) {
      out.push_back(who + std::string(ToString(job.state)) + " but holds placements");
    }
    return;
  }
  std::vector<std::int32_t> placed(job.groups.size(), 0);
  for (const TaskPlacement& t : job.placements) {
    if (t.group < 0 || t.group >= static_cast<std::int32_t>(job.groups.size())) {
      out.push_back(who + "placement names task group " + std::to_string(t.group));
      continue;
    }
    ++placed[t.group];
    expected.node_cpu[t.node.index()] += t.cpu_milli;
    expected.node_memory[t.node.index()] += t.memory;
    for (const GpuShare& s : t.gpus) {
      const Gpu& gpu = cluster.gpu(s.gpu);
      if (gpu.node != t.node) out.push_back(who + "a task on one node holds a GPU of another");
      if (!gpu.healthy) out.push_back(who + "runs on unhealthy GPU " + std::to_string(s.gpu.value()));
      expected.gpu_milli[s.gpu.index()] += s.milli;
      expected.gpu_memory[s.gpu.index()] += s.memory;
    }
  }
  for (std::size_t g = 0; g < job.groups.size(); ++g) {
    if (placed[g] < job.groups[g].min_replicas || placed[g] > job.groups[g].replicas) {
      out.push_back(who + "gang broken: group " + job.groups[g].name + " has " + std::to_string(placed[g]) +
                    " tasks placed, needs " + std::to_string(job.groups[g].min_replicas) + ".." +
                    std::to_string(job.groups[g].replicas));
    }
  }
  if (job.Held() != SumPlacements(job.placements)) out.push_back(who + "held resources disagree with its placements");
  expected.queue_own[job.queue.index()] += SumPlacements(job.placements);
  if (!job.preemptible) expected.queue_pinned[job.queue.index()] += SumPlacements(job.placements).gpu_milli;
}

void CheckArrays(const std::vector<Job>& jobs, std::vector<std::string>& out) {
  std::unordered_map<std::int32_t, ArrayProgress> counted;  // by array job
  for (const Job& job : jobs) {
    if (job.is_array_element()) ++counted[job.array_parent.value()][job.state];
  }
  for (const Job& job : jobs) {
    if (job.is_array_parent && counted[job.id.value()].by_state != job.array_progress.by_state) {
      out.push_back("array " + job.name + ": its counts disagree with its elements' states");
    }
  }
}

}  // namespace

std::vector<std::string> CheckInvariants(const Cluster& cluster, const std::vector<Job>& jobs,
                                         const QueueTree& queues) {
  std::vector<std::string> out;
  Expected expected;
  expected.gpu_milli.assign(cluster.gpus().size(), 0);
  expected.gpu_memory.assign(cluster.gpus().size(), 0);
  expected.node_cpu.assign(cluster.nodes().size(), 0);
  expected.node_memory.assign(cluster.nodes().size(), 0);
  expected.queue_own.assign(queues.queues().size(), Resources{});
  expected.queue_pinned.assign(queues.queues().size(), 0);
  for (const Job& job : jobs) CheckJob(cluster, job, expected, out);
  CheckArrays(jobs, out);

  for (std::size_t i = 0; i < cluster.gpus().size(); ++i) {
    const Gpu& gpu = cluster.gpus()[i];
    const std::string who = "gpu " + std::to_string(i) + " on " + cluster.node(gpu.node).name + ": ";
    if (gpu.used_milli < 0 || gpu.used_milli > 1000) out.push_back(who + std::to_string(gpu.used_milli) + " milli-GPUs in use");
    if (gpu.used_memory < 0 || gpu.used_memory > gpu.memory) out.push_back(who + "memory over capacity");
    if (gpu.used_milli != expected.gpu_milli[i] || gpu.used_memory != expected.gpu_memory[i]) {
      out.push_back(who + "state disagrees with the running jobs' placements");
    }
  }
  for (const Node& node : cluster.nodes()) {
    if (node.used_cpu > node.cpu_milli || node.used_memory > node.memory) out.push_back("node " + node.name + ": CPU or memory over capacity");
    if (node.used_cpu != expected.node_cpu[node.id.index()] || node.used_memory != expected.node_memory[node.id.index()]) {
      out.push_back("node " + node.name + ": CPU or memory disagrees with the running jobs' placements");
    }
  }
  // Queue usage rolls up from each queue's own jobs.
  std::vector<Resources> subtree(queues.queues().size());
  std::vector<std::int64_t> pinned(queues.queues().size(), 0);
  for (const Queue& q : queues.queues()) {
    for (QueueId a = q.id; a.valid(); a = queues.queue(a).parent) {
      subtree[a.index()] += expected.queue_own[q.id.index()];
      pinned[a.index()] += expected.queue_pinned[q.id.index()];
    }
  }
  for (const Queue& q : queues.queues()) {
    if (q.own_allocated != expected.queue_own[q.id.index()] || q.allocated != subtree[q.id.index()] ||
        q.pinned_milli != pinned[q.id.index()]) {
      out.push_back("queue '" + q.path + "': usage disagrees with its jobs");
    }
    if (q.allocated.gpu_milli > q.limit_milli) out.push_back("queue '" + q.path + "': over its limit");
    for (const auto& [user, held] : q.user_gpu_milli) {
      if (held > q.user_limit_milli) out.push_back("queue '" + q.path + "': user '" + user + "' over the user limit");
    }
    if (q.pinned_milli > q.guaranteed_milli) out.push_back("queue '" + q.path + "': non-preemptible jobs over its guarantee");
  }
  for (std::string& problem : cluster.AuditIndexes()) out.push_back(std::move(problem));
  return out;
}

}  // namespace tessera::model
