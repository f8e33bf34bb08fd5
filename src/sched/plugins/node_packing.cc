#include "sched/plugins/node_packing.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>

#include "sched/plugins/unknown_gpu_model.h"

namespace tessera::sched {
namespace {

using model::Cluster;
using model::Node;
using model::TaskRequest;

// A node's GPUs as free milli-GPUs (-1: unhealthy) and its free CPU and memory.
struct NodeFree {
  std::int32_t count = 0;
  std::array<std::int32_t, model::kMaxGpusPerNode> free{};
  std::int64_t cpu = 0, memory = 0;
};

NodeFree Snapshot(const Node& node, const Cluster& cluster) {
  NodeFree f;
  f.count = node.gpu_count;
  for (std::int32_t i = 0; i < node.gpu_count; ++i) {
    const model::Gpu& gpu = cluster.gpu(node.gpu(i));
    f.free[i] = gpu.healthy ? gpu.free_milli() : -1;
  }
  f.cpu = node.free_cpu();
  f.memory = node.free_memory();
  return f;
}

std::uint64_t LowestBits(std::uint64_t bits, int count) {
  std::uint64_t taken = 0;
  for (int i = 0; i < count && bits; ++i) {
    taken |= bits & (~bits + 1);
    bits &= bits - 1;
  }
  return taken;
}

// Free GPU capacity on the node that a task of class `m` could not use.
double Fragmentation(const NodeFree& f, const TaskClass& m) {
  std::int64_t total = 0, small = 0, partial = 0, whole_free = 0;
  bool room_for_fraction = false;
  for (std::int32_t i = 0; i < f.count; ++i) {
    const std::int32_t free = f.free[i];
    if (free <= 0) continue;
    total += free;
    if (free == 1000) ++whole_free; else partial += free;
    if (free < m.gpu_milli) small += free; else room_for_fraction = true;
  }
  if (m.gpu_milli == 0) return 0;  // a CPU-only task leaves GPUs as they are
  const bool fraction = m.gpu_milli < 1000;
  const bool fits = f.cpu >= m.cpu_milli && f.memory >= m.memory &&
                    (fraction ? room_for_fraction : whole_free * 1000 >= m.gpu_milli);
  if (!fits) return static_cast<double>(total);
  return static_cast<double>(fraction ? small : partial);
}

}  // namespace

bool NodePacking::Usable(const Node& node, const TaskRequest& r, const Cluster& cluster, const PlaceOptions& options) {
  if (node.indexed_free < 0) return false;
  if (options.excluded_nodes && (*options.excluded_nodes)[node.id.index()]) return false;
  if (!r.Accepts(node.model) || node.free_cpu() < r.cpu_milli || node.free_memory() < r.memory) return false;
  if (r.gpu_milli > 0 && (node.gpu_count == 0 || cluster.gpu(node.first_gpu).memory < r.gpu_memory)) return false;
  if (r.fractional() && !node.Offers(r.sharing)) return false;
  if (options.within_level == model::TopologyLevel::kCluster) return true;
  return cluster.GroupOf(node.id, options.within_level) == options.within_group;
}

PlaceVerdict NodePacking::Place(const model::Job& job, Cluster& cluster, const PlaceOptions& options,
                                std::vector<model::TaskPlacement>& out) {
  const bool one_per_node = std::any_of(job.groups.begin(), job.groups.end(), [](const model::TaskGroup& g) { return g.one_per_node; });
  if (one_per_node || (job.topology.required && job.topology.level != model::TopologyLevel::kCluster)) {
    return constrained_->Place(job, cluster, options, out);
  }
  if (auto never = NeverForUnknownGpuModel(job, cluster)) return *std::move(never);
  const std::size_t mark = out.size();
  std::int64_t held = 0;
  // Places one task; false when nothing fits.
  const auto place = [&](std::int32_t group, std::int32_t index) {
    const TaskRequest& r = job.groups[group].request;
    const Choice choice = Choose(r, cluster, options);
    if (!choice.node.valid()) return false;
    const Node& node = cluster.node(choice.node);
    model::TaskPlacement task{group, index, choice.node, {}, r.cpu_milli, r.memory};
    for (std::uint64_t bits = choice.gpus; bits; bits &= bits - 1) {
      const model::GpuId gpu = node.gpu(std::countr_zero(bits));
      if (r.fractional()) {
        task.gpus.push_back(r.ShareOn(gpu, cluster.gpu(gpu)));
      } else {
        task.gpus.push_back({gpu, 1000, cluster.gpu(gpu).memory});
      }
    }
    cluster.Allocate(task);  // tentatively, so the next task sees it
    out.push_back(std::move(task));
    held += r.gpu_milli;
    return true;
  };
  bool placed = true;
  for (std::size_t g = 0; g < job.groups.size() && placed; ++g) {
    for (std::int32_t i = 0; i < job.groups[g].min_replicas && placed; ++i) placed = place(static_cast<std::int32_t>(g), i);
  }
  for (std::size_t g = 0; g < job.groups.size() && placed; ++g) {
    for (std::int32_t i = job.groups[g].min_replicas; i < job.groups[g].replicas; ++i) {
      if (held + job.groups[g].request.gpu_milli > options.max_gpu_milli || !place(static_cast<std::int32_t>(g), i)) break;
    }
  }
  for (std::size_t i = out.size(); i > mark; --i) cluster.Release(out[i - 1]);
  if (!placed) out.resize(mark);
  return placed ? PlaceVerdict::Fits() : PlaceVerdict::NotNow();
}

NodePacking::Choice RandomPlacement::Choose(const TaskRequest& r, const Cluster& cluster, const PlaceOptions& options) {
  std::vector<Choice> candidates;
  for (const Node& node : cluster.nodes()) {
    if (!Usable(node, r, cluster, options)) continue;
    if (r.gpu_milli == 0) {
      candidates.push_back({node.id, 0});
    } else if (!r.fractional()) {
      if (node.free_gpus() >= r.whole_gpus()) candidates.push_back({node.id, LowestBits(node.free_mask, r.whole_gpus())});
    } else {
      for (std::int32_t i = 0; i < node.gpu_count; ++i) {
        const model::Gpu& gpu = cluster.gpu(node.gpu(i));
        if (r.FitsOn(gpu)) {
          candidates.push_back({node.id, std::uint64_t{1} << i});
        }
      }
    }
  }
  if (candidates.empty()) return {};
  return candidates[static_cast<std::size_t>(rng_.Uniform(0, static_cast<std::int64_t>(candidates.size()) - 1))];
}

FgdPlacement::FgdPlacement(std::vector<TaskClass> workload, std::unique_ptr<Placement> for_constrained_gangs)
    : NodePacking(std::move(for_constrained_gangs)), workload_(std::move(workload)) {
  double total = 0;
  for (const TaskClass& m : workload_) total += m.weight;
  for (TaskClass& m : workload_) m.weight = total > 0 ? m.weight / total : 0;
}

NodePacking::Choice FgdPlacement::Choose(const TaskRequest& r, const Cluster& cluster, const PlaceOptions& options) {
  const auto expected = [&](const NodeFree& f) {
    double sum = 0;
    for (const TaskClass& m : workload_) sum += m.weight * Fragmentation(f, m);
    return sum;
  };
  Choice best;
  double best_delta = std::numeric_limits<double>::infinity();
  std::int32_t best_free = std::numeric_limits<std::int32_t>::max();
  const auto consider = [&](const Node& node, std::uint64_t gpus, const NodeFree& after, double before) {
    const double delta = expected(after) - before;
    const std::int32_t free = node.free_gpus();
    if (delta < best_delta || (delta == best_delta && free < best_free)) {
      best = {node.id, gpus};
      best_delta = delta;
      best_free = free;
    }
  };
  for (const Node& node : cluster.nodes()) {
    if (!Usable(node, r, cluster, options)) continue;
    NodeFree now = Snapshot(node, cluster);
    const double before = expected(now);
    now.cpu -= r.cpu_milli;
    now.memory -= r.memory;
    if (r.gpu_milli == 0) {
      consider(node, 0, now, before);
    } else if (!r.fractional()) {
      if (node.free_gpus() < r.whole_gpus()) continue;
      const std::uint64_t gpus = LowestBits(node.free_mask, r.whole_gpus());
      NodeFree after = now;
      for (std::uint64_t bits = gpus; bits; bits &= bits - 1) after.free[std::countr_zero(bits)] = 0;
      consider(node, gpus, after, before);
    } else {
      for (std::int32_t i = 0; i < node.gpu_count; ++i) {
        const model::Gpu& gpu = cluster.gpu(node.gpu(i));
        if (!r.FitsOn(gpu)) continue;
        NodeFree after = now;
        after.free[i] -= static_cast<std::int32_t>(r.gpu_milli);
        consider(node, std::uint64_t{1} << i, after, before);
      }
    }
  }
  return best;
}

}  // namespace tessera::sched
