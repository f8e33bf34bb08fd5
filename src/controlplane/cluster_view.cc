// Read-only views of the cluster: the summary, one node, every GPU's cell for
// the dashboard's heatmap, and the utilization history the housekeeping
// thread samples.
#include <algorithm>
#include <map>
#include <tuple>

#include "controlplane/control_plane.h"
#include "controlplane/gpu_cells.h"
#include "controlplane/request_params.h"
#include "controlplane/responses.h"

namespace tessera::controlplane {

using nlohmann::json;

GpuContext ControlPlane::ContextOf(const NodeRecord& node, std::int32_t local_index) const {
  GpuContext context;
  context.node_lost = node.state == NodeState::kLost;
  context.node_cordoned = node.cordoned;
  context.idle_threshold_percent = options_.idle.threshold_percent;
  if (auto u = node.gpu_utilization.find(local_index); u != node.gpu_utilization.end()) context.utilization = u->second;
  return context;
}

json ControlPlane::NodeJson(const NodeRecord& node) const {
  json j = api::ToJson(node.inventory);
  j["state"] = node.cordoned && node.state == NodeState::kReady ? "cordoned" : std::string(ToString(node.state));
  j["cordoned"] = node.cordoned;
  j["lastHeartbeat"] = node.last_heartbeat_ms;
  std::int64_t allocated_milli = 0;
  std::int64_t jobs = 0;
  json& gpus = j["gpus"];
  if (state_ && !rebuild_needed_) {
    const Result<model::NodeId> id = state_->cluster().FindNode(node.inventory.name);
    if (id.ok()) {
      const model::Node& n = state_->cluster().node(*id);
      for (std::int32_t i = 0; i < n.gpu_count && i < static_cast<std::int32_t>(gpus.size()); ++i) {
        const model::Gpu& g = state_->cluster().gpu(n.gpu(i));
        json& gpu = gpus[static_cast<std::size_t>(i)];
        gpu["allocatedMilli"] = g.used_milli;
        gpu["allocatedMemory"] = g.used_memory;
        gpu["cell"] = CellName(ClassifyGpu(g, ContextOf(node, i)));
        gpu["jobs"] = json::array();
        if (g.fraction_tenants > 0) gpu["sharedAs"] = model::ToString(g.shared_as);
        if (auto b = node.burst_memory.find(i); b != node.burst_memory.end()) gpu["burstMemory"] = b->second;
        if (auto u = node.gpu_utilization.find(i); u != node.gpu_utilization.end()) gpu["utilization"] = u->second;
        allocated_milli += g.used_milli;
      }
    }
  }
  // Which jobs hold each GPU: the dispatched runs' tasks on this node.
  if (auto it = node_jobs_.find(node.inventory.name); it != node_jobs_.end()) {
    jobs = static_cast<std::int64_t>(it->second.size());
    for (const std::int64_t job : it->second) {
      for (const TaskRecord& task : records_[static_cast<std::size_t>(job)].tasks) {
        if (task.node != node.inventory.name) continue;
        for (const std::int32_t g : task.gpus) {
          if (g >= 0 && static_cast<std::size_t>(g) < gpus.size() && gpus[static_cast<std::size_t>(g)].contains("jobs")) {
            gpus[static_cast<std::size_t>(g)]["jobs"].push_back(job);
          }
        }
      }
    }
  }
  j["allocatedGpus"] = static_cast<double>(allocated_milli) / 1000.0;
  j["jobs"] = jobs;
  return j;
}

net::HttpResponse ControlPlane::ClusterSummary(const net::HttpRequest&) {
  std::lock_guard lock(mu_);
  EnsureState();
  const model::Cluster& c = state_->cluster();
  std::int64_t ready = 0;
  for (const auto& [name, node] : nodes_) ready += node.state == NodeState::kReady && !node.cordoned;
  return JsonResponse(200, {{"nodes", nodes_.size()},
                            {"readyNodes", ready},
                            {"gpus", static_cast<double>(c.capacity().gpu_milli) / 1000.0},
                            {"allocatedGpus", static_cast<double>(c.allocated().gpu_milli) / 1000.0},
                            {"pendingJobs", state_->jobs().pending().size()},
                            {"runningJobs", state_->jobs().running().size()},
                            {"jobs", std::count_if(records_.begin(), records_.end(), [](const JobRecord& r) { return !r.tombstone; })},
                            {"revision", events_.last_revision()},
                            {"cycles", stats_.cycles},
                            {"lastCycleMs", stats_.last_cycle_ms},
                            {"storeTransactions", commits_->transactions()}});
}

net::HttpResponse ControlPlane::GpuMap(const net::HttpRequest&) {
  std::lock_guard lock(mu_);
  EnsureState();
  const model::Cluster& cluster = state_->cluster();
  // Grouped as the network is: spine, then leaf, then the order nodes joined.
  std::vector<const NodeRecord*> order;
  for (const std::string& name : node_order_) order.push_back(&nodes_.at(name));
  std::stable_sort(order.begin(), order.end(), [](const NodeRecord* a, const NodeRecord* b) {
    return std::tie(a->inventory.spine, a->inventory.leaf) < std::tie(b->inventory.spine, b->inventory.leaf);
  });
  std::map<GpuCell, std::int64_t> counts;
  json nodes = json::array();
  for (const NodeRecord* node : order) {
    std::string cells;
    if (const Result<model::NodeId> id = cluster.FindNode(node->inventory.name); id.ok()) {
      const model::Node& n = cluster.node(*id);
      for (std::int32_t i = 0; i < n.gpu_count; ++i) {
        const GpuCell cell = ClassifyGpu(cluster.gpu(n.gpu(i)), ContextOf(*node, i));
        cells.push_back(static_cast<char>(cell));
        ++counts[cell];
      }
    }
    nodes.push_back({{"name", node->inventory.name},
                     {"leaf", node->inventory.leaf},
                     {"spine", node->inventory.spine},
                     {"state", node->cordoned && node->state == NodeState::kReady ? "cordoned" : std::string(ToString(node->state))},
                     {"gpus", std::move(cells)}});
  }
  json legend = json::object(), totals = json::object();
  for (const GpuCell cell : kAllCells) {
    legend[std::string(1, static_cast<char>(cell))] = CellName(cell);
    totals[std::string(CellName(cell))] = counts[cell];
  }
  return JsonResponse(200, {{"revision", events_.last_revision()},
                            {"idleThresholdPercent", options_.idle.threshold_percent},
                            {"legend", legend},
                            {"counts", totals},
                            {"nodes", nodes}});
}

net::HttpResponse ControlPlane::History(const net::HttpRequest& request) {
  const Result<std::int64_t> since = QueryCount(request, "since", 0);
  if (!since.ok()) return StatusResponse(since.status());
  std::lock_guard lock(mu_);
  return JsonResponse(200, history_.ToJson(*since));
}

ClusterSample ControlPlane::SampleCluster(std::int64_t now_ms) const {
  const model::Cluster& cluster = state_->cluster();
  ClusterSample sample;
  sample.time_ms = now_ms;
  sample.pending_jobs = static_cast<std::int64_t>(state_->jobs().pending().size());
  sample.running_jobs = static_cast<std::int64_t>(state_->jobs().running().size());
  for (const auto& [name, node] : nodes_) {
    const Result<model::NodeId> id = cluster.FindNode(name);
    if (!id.ok() || node.state != NodeState::kReady) continue;
    const model::Node& n = cluster.node(*id);
    for (std::int32_t i = 0; i < n.gpu_count; ++i) {
      const model::Gpu& gpu = cluster.gpu(n.gpu(i));
      if (!gpu.healthy) continue;
      sample.gpus += 1;
      sample.allocated += gpu.used_milli / 1000.0;
      if (ClassifyGpu(gpu, ContextOf(node, i)) == GpuCell::kIdle) sample.idle += gpu.used_milli / 1000.0;
    }
  }
  return sample;
}

}  // namespace tessera::controlplane
