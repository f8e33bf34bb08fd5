// GET /metrics: the server's metrics in Prometheus' text format. The
// event-driven ones live in ServerMetrics; the rest are read off the state
// here, under the control plane's lock (docs/observability.md).
#include <map>

#include "controlplane/control_plane.h"
#include "metrics/exposition.h"

namespace tessera::controlplane {

std::string ControlPlane::Metrics() {
  std::lock_guard lock(mu_);
  EnsureState();
  const model::Cluster& cluster = state_->cluster();
  metrics::Snapshot s;

  // Queues: depth, running work, and GPUs against their guarantee.
  std::map<model::QueueId, std::pair<std::int64_t, std::int64_t>> counts;  // pending, running
  for (const model::JobId id : state_->jobs().pending()) ++counts[state_->job(id).queue].first;
  for (const model::JobId id : state_->jobs().running()) ++counts[state_->job(id).queue].second;
  for (const model::Queue& q : state_->queues().queues()) {
    if (q.id == state_->queues().root()) continue;
    const metrics::Labels labels{{"queue", q.path}};
    s.Gauge("tessera_queue_pending_jobs", "Jobs waiting in the queue.").Add(labels, static_cast<double>(counts[q.id].first));
    s.Gauge("tessera_queue_running_jobs", "Jobs of the queue running now.").Add(labels, static_cast<double>(counts[q.id].second));
    s.Gauge("tessera_queue_allocated_gpus", "GPUs the queue's running jobs hold.")
        .Add(labels, static_cast<double>(q.allocated.gpu_milli) / 1000.0);
    if (q.guaranteed_milli < model::kUnlimited / 2) {  // the default queue's "everything" is no figure
      s.Gauge("tessera_queue_guaranteed_gpus", "GPUs guaranteed to the queue.").Add(labels, static_cast<double>(q.guaranteed_milli) / 1000.0);
    }
  }

  // Pending jobs by why they wait, and jobs by state.
  std::map<std::string, std::int64_t> by_reason, by_state;
  for (const model::JobId id : state_->jobs().pending()) ++by_reason[records_.at(id).wait_reason];
  for (const model::Job& job : state_->jobs().all()) {
    ++by_state[std::string(job.is_array_parent ? ArrayApiState(job) : ApiState(job.state, records_.at(job.id).running_ms != 0))];
  }
  // GPU time by queue and user, over every job the server knows (finished
  // ones included) and the forgotten ones, so the counters never go down.
  std::map<std::pair<std::string, std::string>, std::pair<double, double>> gpu_time;  // (queue, user) -> held, idle
  for (const JobRecord& record : records_.values()) {
    if (record.gpu_seconds == 0) continue;
    auto& [held, idle] = gpu_time[{record.queue, record.user}];
    held += record.gpu_seconds;
    idle += record.idle_gpu_seconds;
  }
  for (const auto& [key, usage] : forgotten_usage_) {
    auto& [held, idle] = gpu_time[{key.queue, key.user}];
    held += usage.gpu_seconds;
    idle += usage.idle_gpu_seconds;
  }
  for (const auto& [key, time] : gpu_time) {
    const metrics::Labels labels{{"queue", key.first}, {"user", key.second}};
    s.Counter("tessera_gpu_allocated_seconds_total", "GPU time jobs held, fractions by their share.").Add(labels, time.first);
    s.Counter("tessera_gpu_idle_seconds_total", "GPU time jobs held while their GPUs were idle (docs/observability.md).")
        .Add(labels, time.second);
  }
  for (const auto& [reason, n] : by_reason) {
    s.Gauge("tessera_scheduler_pending_jobs", "Pending jobs by the reason the last cycle gave.")
        .Add({{"reason", reason.empty() ? "not-yet-considered" : reason}}, static_cast<double>(n));
  }
  for (const auto& [state, n] : by_state) {
    s.Gauge("tessera_jobs", "Jobs by state, the ended ones the server still keeps included.").Add({{"state", state}}, static_cast<double>(n));
  }

  // Nodes and their GPUs.
  std::map<std::string, std::int64_t> nodes_by_state;
  for (const auto& [name, node] : nodes_) {
    ++nodes_by_state[node.cordoned && node.state == NodeState::kReady ? "cordoned" : std::string(ToString(node.state))];
  }
  for (const auto& [state, n] : nodes_by_state) {
    s.Gauge("tessera_nodes", "Nodes by state.").Add({{"state", state}}, static_cast<double>(n));
  }
  for (const model::Node& node : cluster.nodes()) {
    double allocated = 0, idle = 0, unhealthy = 0;
    for (std::int32_t i = 0; i < node.gpu_count; ++i) {
      const model::Gpu& gpu = cluster.gpu(node.gpu(i));
      if (!gpu.healthy) {
        ++unhealthy;
        continue;
      }
      allocated += gpu.used_milli / 1000.0;
      idle += gpu.free_milli() / 1000.0;
    }
    const std::string model = cluster.model_name(node.model);
    const auto add = [&](const char* state, double value) {
      s.Gauge("tessera_node_gpus", "GPUs of a node by state: allocated (fractions count by their share), idle (free), unhealthy.")
          .Add({{"node", node.name}, {"model", model}, {"state", state}}, value);
    };
    add("allocated", allocated);
    add("idle", idle);
    add("unhealthy", unhealthy);
    s.Gauge("tessera_node_gpu_capacity", "GPUs of a node.").Add({{"node", node.name}, {"model", model}}, node.gpu_count);
  }
  s.Gauge("tessera_cluster_gpus", "GPUs in the cluster by state.")
      .Add({{"state", "allocated"}}, static_cast<double>(cluster.allocated().gpu_milli) / 1000.0)
      .Add({{"state", "total"}}, static_cast<double>(cluster.capacity().gpu_milli) / 1000.0);
  s.Counter("tessera_store_transactions_total", "State store transactions committed.").Add({}, static_cast<double>(commits_->transactions()));

  return s.Render(&metrics_->registry);
}

}  // namespace tessera::controlplane
