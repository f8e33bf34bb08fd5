// Read-only views of the cluster: the summary, one node, every GPU's cell for
// the dashboard's heatmap, and the utilization history the housekeeping
// thread samples.
#include <algorithm>
#include <map>
#include <cctype>
#include <string_view>

#include "controlplane/control_plane.h"
#include "controlplane/gpu_cells.h"

namespace tessera::controlplane {

using nlohmann::json;

namespace {

// "leaf-2" before "leaf-10": runs of digits compare as numbers.
bool NaturalLess(std::string_view a, std::string_view b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      const std::size_t i0 = i, j0 = j;
      while (i < a.size() && std::isdigit(static_cast<unsigned char>(a[i]))) ++i;
      while (j < b.size() && std::isdigit(static_cast<unsigned char>(b[j]))) ++j;
      const std::string_view x = a.substr(i0, i - i0), y = b.substr(j0, j - j0);
      const std::size_t xz = std::min(x.find_first_not_of('0'), x.size()), yz = std::min(y.find_first_not_of('0'), y.size());
      if (x.size() - xz != y.size() - yz) return x.size() - xz < y.size() - yz;  // fewer significant digits: smaller
      if (const int c = x.substr(xz).compare(y.substr(yz)); c != 0) return c < 0;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i, ++j;
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

GpuContext ControlPlane::ContextOf(const NodeRecord& node, std::int32_t local_index) const {
  GpuContext context;
  context.node_lost = node.state == NodeState::kLost;
  context.node_cordoned = node.cordoned;
  context.idle_threshold_percent = options_.idle.threshold_percent;
  if (auto u = node.gpu_utilization.find(local_index); u != node.gpu_utilization.end()) context.utilization = u->second;
  return context;
}

json ControlPlane::NodeJson(const NodeRecord& node, bool with_gpus) const {
  json j = api::ToJson(node.inventory);
  j["state"] = node.cordoned && node.state == NodeState::kReady ? "cordoned" : std::string(ToString(node.state));
  j["cordoned"] = node.cordoned;
  j["lastHeartbeat"] = node.last_heartbeat_ms;
  json& gpus = j["gpus"];
  const auto node_jobs = node_jobs_.find(node.inventory.name);
  j["jobs"] = node_jobs == node_jobs_.end() ? 0 : node_jobs->second.size();
  std::int64_t allocated_milli = 0;
  if (state_ && !rebuild_needed_) {
    const Result<model::NodeId> id = state_->cluster().FindNode(node.inventory.name);
    if (id.ok()) {
      const model::Node& n = state_->cluster().node(*id);
      for (std::int32_t i = 0; i < n.gpu_count && i < static_cast<std::int32_t>(gpus.size()); ++i) {
        const model::Gpu& g = state_->cluster().gpu(n.gpu(i));
        allocated_milli += g.used_milli;
        if (!with_gpus) continue;
        json& gpu = gpus[static_cast<std::size_t>(i)];
        gpu["allocatedMilli"] = g.used_milli;
        gpu["allocatedMemory"] = g.used_memory;
        gpu["cell"] = CellName(ClassifyGpu(g, ContextOf(node, i)));
        gpu["jobs"] = json::array();
        if (g.fraction_tenants > 0) gpu["sharedAs"] = model::ToString(g.shared_as);
        // The inventory's MIG devices, each with whether a task holds it.
        for (std::size_t d = 0; d < g.mig.size() && gpu.contains("mig") && d < gpu["mig"].size(); ++d) gpu["mig"][d]["used"] = g.mig[d].used;
        if (auto b = node.burst_memory.find(i); b != node.burst_memory.end()) gpu["burstMemory"] = b->second;
        if (auto u = node.gpu_utilization.find(i); u != node.gpu_utilization.end()) gpu["utilization"] = u->second;
        if (auto o = node.unhealthy_gpus.find(i); o != node.unhealthy_gpus.end()) gpu["outOfService"] = o->second;
      }
    }
  }
  j["allocatedGpus"] = static_cast<double>(allocated_milli) / 1000.0;
  if (!with_gpus) {  // the list's light form: a count instead of every GPU
    j["gpuCount"] = gpus.size();
    j.erase("gpus");
    return j;
  }
  json images = json::array();
  for (const api::CachedImageReport& i : node.images) {
    images.push_back({{"references", i.references}, {"digest", i.digest}, {"sizeBytes", i.size_bytes}});
  }
  j["images"] = std::move(images);
  // Which jobs hold each GPU: the dispatched runs' tasks on this node.
  if (node_jobs == node_jobs_.end()) return j;
  for (const std::int64_t job : node_jobs->second) {
    for (const TaskRecord& task : records_.at(model::JobId(static_cast<std::int32_t>(job))).tasks) {
      if (task.node != node.inventory.name) continue;
      for (const std::int32_t g : task.gpus) {
        if (g >= 0 && static_cast<std::size_t>(g) < gpus.size() && gpus[static_cast<std::size_t>(g)].contains("jobs")) {
          gpus[static_cast<std::size_t>(g)]["jobs"].push_back(job);
        }
      }
    }
  }
  return j;
}

json ControlPlane::ClusterSummary() {
  std::lock_guard lock(mu_);
  EnsureState();
  const model::Cluster& c = state_->cluster();
  std::int64_t ready = 0;
  for (const auto& [name, node] : nodes_) ready += node.state == NodeState::kReady && !node.cordoned;
  return {{"nodes", nodes_.size()},
          {"readyNodes", ready},
          {"gpus", static_cast<double>(c.capacity().gpu_milli) / 1000.0},
          {"allocatedGpus", static_cast<double>(c.allocated().gpu_milli) / 1000.0},
          {"pendingJobs", state_->jobs().pending().size()},
          {"runningJobs", state_->jobs().running().size()},
          {"jobs", records_.size()},
          {"revision", events_.last_revision()},
          {"cycles", stats_.cycles},
          {"lastCycleMs", stats_.last_cycle_ms},
          {"storeTransactions", commits_->transactions()}};
}

json ControlPlane::GpuMap() {
  std::lock_guard lock(mu_);
  EnsureState();
  const model::Cluster& cluster = state_->cluster();
  // Grouped as the network is: spine, then leaf, then the order nodes joined.
  std::vector<const NodeRecord*> order;
  for (const std::string& name : node_order_) order.push_back(&nodes_.at(name));
  std::stable_sort(order.begin(), order.end(), [](const NodeRecord* a, const NodeRecord* b) {
    if (a->inventory.spine != b->inventory.spine) return NaturalLess(a->inventory.spine, b->inventory.spine);
    return NaturalLess(a->inventory.leaf, b->inventory.leaf);
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
  return {{"revision", events_.last_revision()},
          {"idleThresholdPercent", options_.idle.threshold_percent},
          {"legend", legend},
          {"counts", totals},
          {"nodes", nodes}};
}

json ControlPlane::History(std::int64_t since_ms) {
  std::lock_guard lock(mu_);
  return history_.ToJson(since_ms);
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
