#include "model/feasibility.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "base/quantity.h"

namespace tessera::model {
namespace {

std::string TaskField(std::size_t group, const char* field) {
  return "spec.tasks[" + std::to_string(group) + "]." + field;
}

// The node's MIG devices of the profile, held or free.
std::int64_t MigDevicesOn(const Cluster& cluster, const Node& node, const std::string& profile) {
  std::int64_t devices = 0;
  for (std::int32_t local = 0; local < node.gpu_count; ++local) {
    for (const MigDevice& device : cluster.gpu(node.gpu(local)).mig) devices += device.profile == profile ? 1 : 0;
  }
  return devices;
}

bool NodeHoldsTask(const Cluster& cluster, const Node& node, const TaskRequest& r) {
  if (!r.Accepts(node.model) || node.cpu_milli < r.cpu_milli || node.memory < r.memory) return false;
  if (r.gpu_milli == 0) return true;
  if (r.sharing == GpuSharing::kMig) return MigDevicesOn(cluster, node, r.mig_profile) > 0;
  if (node.gpu_count < std::max(1, r.whole_gpus())) return false;
  if (r.fractional() && !node.Offers(r.sharing)) return false;
  return cluster.gpu(node.first_gpu).memory >= r.gpu_memory;
}

// How many tasks of `r` fit into the nodes, each node considered empty;
// at most one a node for a onePerNode group.
std::int64_t TasksThatFit(const Cluster& cluster, const std::vector<NodeId>& nodes, const TaskRequest& r,
                          bool one_per_node) {
  std::int64_t tasks = 0;
  for (NodeId id : nodes) {
    const Node& node = cluster.node(id);
    if (!NodeHoldsTask(cluster, node, r)) continue;
    std::int64_t by_gpu = r.gpu_milli == 0 ? kUnlimited : (node.gpu_count * 1000LL) / r.gpu_milli;
    if (r.sharing == GpuSharing::kMig) {
      by_gpu = MigDevicesOn(cluster, node, r.mig_profile);
    } else if (r.fractional()) {
      const std::int64_t gpu_memory = cluster.gpu(node.first_gpu).memory;
      by_gpu = node.gpu_count * std::min<std::int64_t>(1000 / r.gpu_milli, gpu_memory / std::max<std::int64_t>(r.MemoryOn(gpu_memory), 1));
    }
    const std::int64_t by_cpu = r.cpu_milli > 0 ? node.cpu_milli / r.cpu_milli : kUnlimited;
    const std::int64_t by_mem = r.memory > 0 ? node.memory / r.memory : kUnlimited;
    // Saturates: a task that asks nothing fits kUnlimited times on every node.
    const std::int64_t here = std::min({by_gpu, by_cpu, by_mem});
    tasks = std::min(kUnlimited, tasks + (one_per_node ? std::min<std::int64_t>(here, 1) : here));
  }
  return tasks;
}

Status CheckTask(const Cluster& cluster, const TaskRequest& r, std::size_t group) {
  std::int32_t most_gpus = 0;
  std::int64_t most_gpu_memory = 0, most_cpu = 0, most_memory = 0;
  for (const Node& node : cluster.nodes()) {
    if (!r.Accepts(node.model)) continue;
    if (NodeHoldsTask(cluster, node, r)) return Status::Ok();
    most_gpus = std::max(most_gpus, node.gpu_count);
    if (node.gpu_count > 0) most_gpu_memory = std::max(most_gpu_memory, cluster.gpu(node.first_gpu).memory);
    most_cpu = std::max(most_cpu, node.cpu_milli);
    most_memory = std::max(most_memory, node.memory);
  }
  const std::string where = r.gpu_model.empty() ? "" : " with " + r.gpu_model + " GPUs";
  if (r.sharing == GpuSharing::kMig) {
    std::set<std::string> profiles;
    for (const Node& node : cluster.nodes()) {
      for (std::int32_t local = 0; r.Accepts(node.model) && local < node.gpu_count; ++local) {
        for (const MigDevice& device : cluster.gpu(node.gpu(local)).mig) profiles.insert(device.profile);
      }
    }
    if (!profiles.contains(r.mig_profile)) {
      std::string have;
      for (const std::string& p : profiles) have += (have.empty() ? "" : ", ") + p;
      return Infeasible(TaskField(group, "resources.mig") + ": no node" + where + " has a MIG device of profile " + r.mig_profile +
                        (have.empty() ? " (no GPU is in MIG mode)" : " (the cluster's profiles: " + have + ")"));
    }
  }
  if (r.fractional() && r.sharing != GpuSharing::kMig && std::none_of(cluster.nodes().begin(), cluster.nodes().end(), [&](const Node& node) {
        return r.Accepts(node.model) && node.gpu_count > 0 && node.Offers(r.sharing);
      })) {
    return Infeasible(TaskField(group, "resources.gpuSharing") + ": no node" + where + " shares GPUs as " +
                      std::string(ToString(r.sharing)));
  }
  if (r.whole_gpus() > most_gpus) {
    return Infeasible(TaskField(group, "resources.gpus") + ": " + std::to_string(r.whole_gpus()) +
                      " GPUs per task, but the largest node" + where + " has " + std::to_string(most_gpus));
  }
  if (r.gpu_memory > most_gpu_memory) {
    return Infeasible(TaskField(group, "resources.gpuMemory") + ": asks " + FormatBytes(r.gpu_memory) +
                      " per GPU, but the largest GPU" + where + " has " + FormatBytes(most_gpu_memory));
  }
  if (r.cpu_milli > most_cpu) {
    return Infeasible(TaskField(group, "resources.cpus") + ": asks " + FormatMilli(r.cpu_milli) +
                      " CPUs, but the largest node" + where + " has " + FormatMilli(most_cpu));
  }
  if (r.memory > most_memory) {
    return Infeasible(TaskField(group, "resources.memory") + ": asks " + FormatBytes(r.memory) +
                      ", but the largest node" + where + " has " + FormatBytes(most_memory));
  }
  return Infeasible(TaskField(group, "resources") + ": no single node" + where + " has " +
                    FormatMilli(r.gpu_milli) + " GPUs, " + FormatMilli(r.cpu_milli) + " CPUs and " +
                    FormatBytes(r.memory) + " of memory together");
}

// The gang's minimum members must fit inside one domain of a required level.
Status CheckTopology(const Job& job, const Cluster& cluster, const std::vector<TaskRequest>& requests) {
  const TopologyLevel level = job.topology.level;
  if (!job.topology.required || level == TopologyLevel::kCluster) return Status::Ok();
  // The domains: the level's node groups, then single nodes. For kNode every
  // node; for kNvlink every node outside a multi-node group, whose NVLink
  // domains are inside it (a cluster may mix NVL racks and NVSwitch nodes).
  const std::int32_t groups = level == TopologyLevel::kNode ? 0 : cluster.GroupCount(level);
  std::vector<NodeId> single_nodes;
  for (const Node& node : cluster.nodes()) {
    if (level == TopologyLevel::kNode || (level == TopologyLevel::kNvlink && node.nvlink_group < 0)) {
      single_nodes.push_back(node.id);
    }
  }
  const std::int32_t domains = groups + static_cast<std::int32_t>(single_nodes.size());
  std::int64_t largest_domain_gpus = 0;
  for (std::int32_t d = 0; d < domains; ++d) {
    const bool local_nvlink = level == TopologyLevel::kNvlink && d >= groups;
    const std::vector<NodeId> nodes = d < groups ? cluster.Group(level, d).nodes
                                                 : std::vector<NodeId>{single_nodes[d - groups]};
    bool fits = true;
    for (std::size_t g = 0; g < job.groups.size() && fits; ++g) {
      const TaskRequest& r = requests[g];
      // Inside one node-local NVLink domain: the largest domain of the node.
      std::int64_t tasks = TasksThatFit(cluster, nodes, r, job.groups[g].one_per_node);
      if (local_nvlink && r.gpu_milli > 0) {
        const Node& node = cluster.node(nodes[0]);
        std::int64_t domain_gpus = 0;
        for (std::uint64_t mask : node.nvlink_masks) domain_gpus = std::max<std::int64_t>(domain_gpus, std::popcount(mask));
        tasks = std::min(tasks, r.fractional() ? tasks : domain_gpus * 1000 / r.gpu_milli);
      }
      fits = tasks >= job.groups[g].min_replicas;
    }
    std::int64_t gpus = 0;
    for (NodeId n : nodes) gpus += cluster.node(n).gpu_count;
    if (local_nvlink) {
      gpus = 0;
      for (std::uint64_t mask : cluster.node(nodes[0]).nvlink_masks) gpus = std::max<std::int64_t>(gpus, std::popcount(mask));
    }
    // Each group fitting alone is not enough: together they need the domain's GPUs too.
    if (fits && job.MinGpuMilli() <= gpus * 1000) return Status::Ok();
    largest_domain_gpus = std::max(largest_domain_gpus, gpus);
  }
  const std::string name(ToString(level));
  return Infeasible("spec.topology: the gang needs " + FormatMilli(job.MinGpuMilli()) +
                    " GPUs inside one " + name + ", but the largest " + name + " has " +
                    std::to_string(largest_domain_gpus) + " GPUs (use mode: preferred to allow spreading)");
}

Status CheckQueue(const Job& job, const QueueTree& queues) {
  const std::int64_t need = job.MinGpuMilli();
  for (QueueId q = job.queue; q.valid() && q != queues.root(); q = queues.queue(q).parent) {
    const Queue& queue = queues.queue(q);
    if (need > queue.limit_milli) {
      return Infeasible("metadata.queue: queue '" + queue.path + "' is limited to " + FormatMilli(queue.limit_milli) +
                        " GPUs, but the gang needs " + FormatMilli(need));
    }
    if (need > queue.user_limit_milli) {
      return Infeasible("metadata.queue: queue '" + queue.path + "' allows one user " + FormatMilli(queue.user_limit_milli) +
                        " GPUs, but the gang needs " + FormatMilli(need));
    }
    if (!job.preemptible && need > queue.guaranteed_milli) {
      return Infeasible("spec.preemptible: a non-preemptible job must fit in its queue's guarantee, but queue '" +
                        queue.path + "' guarantees " + FormatMilli(queue.guaranteed_milli) +
                        " GPUs and the gang needs " + FormatMilli(need));
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckFeasible(const Job& job, const Cluster& cluster, const QueueTree& queues) {
  if (job.groups.empty()) return Infeasible("spec.tasks: a job needs at least one task");
  // Requests with their accepted models resolved against this cluster.
  std::vector<TaskRequest> requests;
  for (std::size_t g = 0; g < job.groups.size(); ++g) {
    TaskRequest r = job.groups[g].request;
    if (!r.gpu_model.empty()) {
      auto models = cluster.ResolveModels(r.gpu_model);
      if (!models.ok()) return Infeasible(TaskField(g, "resources.gpuModel") + ": " + models.status().message());
      r.models = *models;
    }
    TESSERA_RETURN_IF_ERROR(CheckTask(cluster, r, g));
    std::vector<NodeId> all;
    for (const Node& n : cluster.nodes()) all.push_back(n.id);
    const bool one_per_node = job.groups[g].one_per_node;
    const std::int64_t fit = TasksThatFit(cluster, all, r, one_per_node);
    if (fit < job.groups[g].min_replicas) {
      return Infeasible(TaskField(g, "replicas") + ": the gang needs " + std::to_string(job.groups[g].min_replicas) +
                        " such tasks at once" + (one_per_node ? ", one per node," : ",") + " but the whole cluster holds only " + std::to_string(fit));
    }
    requests.push_back(std::move(r));
  }
  TESSERA_RETURN_IF_ERROR(CheckTopology(job, cluster, requests));
  return CheckQueue(job, queues);
}

}  // namespace tessera::model
