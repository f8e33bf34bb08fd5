// GPU health as the agents report it (node/health/gpu_health.h judges the
// faults): the scheduler stops placing work on a GPU out of service, the runs
// on it are requeued without using up a restart (the fault is the cluster's,
// not the job's), and the GPU returns when the agent says its check passed.
#include <algorithm>
#include <set>

#include "controlplane/control_plane.h"

namespace tessera::controlplane {

void ControlPlane::ApplyGpuHealth(NodeRecord& node, const api::StatusReport& report) {
  const std::string name = node.inventory.name;
  for (const api::GpuFaultReport& f : report.faults) {
    Emit("GpuFault", -1, name, "GPU " + std::to_string(f.index) + ": " + f.detail + " (" + f.fault_class + ")");
  }
  std::map<std::int32_t, std::string> out;
  for (const api::GpuOutageReport& o : report.unhealthy_gpus) {
    if (o.index >= 0 && static_cast<std::size_t>(o.index) < node.inventory.gpus.size()) out[o.index] = o.reason;
  }
  if (out == node.unhealthy_gpus) return;
  const model::Cluster& cluster = state_->cluster();
  const model::NodeId id = *cluster.FindNode(name);
  std::set<model::JobId> requeue;
  std::map<model::JobId, std::string> why;
  for (const auto& [index, reason] : out) {
    if (node.unhealthy_gpus.contains(index)) continue;
    const model::GpuId gpu = cluster.node(id).gpu(index);
    state_.SetGpuHealthy(gpu, false);
    Emit("GpuUnhealthy", -1, name, "GPU " + std::to_string(index) + " out of service: " + reason);
    for (const model::JobId job : state_->JobsOnNode(id)) {
      for (const model::TaskPlacement& task : state_->job(job).placements) {
        const bool on_it = std::any_of(task.gpus.begin(), task.gpus.end(), [&](const model::GpuShare& s) { return s.gpu == gpu; });
        if (on_it && requeue.insert(job).second) why[job] = "GPU " + std::to_string(index) + " of node " + name + " failed: " + reason;
      }
    }
  }
  for (const auto& [index, reason] : node.unhealthy_gpus) {
    if (out.contains(index)) continue;
    const bool inventory_healthy = node.inventory.gpus[static_cast<std::size_t>(index)].healthy;
    if (inventory_healthy) state_.SetGpuHealthy(cluster.node(id).gpu(index), true);
    Emit("GpuHealthy", -1, name, "GPU " + std::to_string(index) +
                                     " back in service (the agent no longer reports it out: its health check passed, or the agent restarted)");
  }
  node.unhealthy_gpus = std::move(out);
  PersistNode(node);
  for (const model::JobId job : requeue) RequeueRun(job, why[job]);
  RequestCycle();
}

}  // namespace tessera::controlplane
