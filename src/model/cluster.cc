#include "model/cluster.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "model/mig.h"

namespace tessera::model {
namespace {

constexpr int kLevelNvlink = static_cast<int>(TopologyLevel::kNvlink);
constexpr int kLevelLeaf = static_cast<int>(TopologyLevel::kLeaf);
constexpr int kLevelSpine = static_cast<int>(TopologyLevel::kSpine);
constexpr int kLevelCluster = static_cast<int>(TopologyLevel::kCluster);
constexpr std::array<int, 4> kGroupLevels = {kLevelNvlink, kLevelLeaf, kLevelSpine, kLevelCluster};

std::uint64_t LowBits(std::int32_t n) { return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1; }

// Splits `count` GPUs into `parts` contiguous masks of (nearly) equal size.
std::vector<std::uint64_t> SplitMasks(std::int32_t count, std::int32_t parts) {
  std::vector<std::uint64_t> masks;
  parts = std::max(1, std::min(parts, std::max(count, 1)));
  std::int32_t start = 0;
  for (std::int32_t p = 0; p < parts; ++p) {
    const std::int32_t size = count / parts + (p < count % parts ? 1 : 0);
    masks.push_back(LowBits(size) << start);
    start += size;
  }
  return masks;
}

// One mask per distinct value of `group_of` (GPU by GPU), in the order of
// each group's lowest GPU.
std::vector<std::uint64_t> GroupMasks(const std::vector<std::int32_t>& group_of) {
  std::vector<std::int32_t> order;
  std::map<std::int32_t, std::uint64_t> masks;
  for (std::size_t local = 0; local < group_of.size(); ++local) {
    auto [it, inserted] = masks.try_emplace(group_of[local], 0);
    if (inserted) order.push_back(group_of[local]);
    it->second |= std::uint64_t{1} << local;
  }
  std::vector<std::uint64_t> ordered;
  for (const std::int32_t group : order) ordered.push_back(masks.at(group));
  return ordered;
}

Status ValidateSpec(const NodeSpec& spec) {
  const std::string where = "node '" + spec.name + "': ";
  if (spec.name.empty()) return InvalidArgument("a node has no name");
  if (spec.gpus < 0 || spec.gpus > kMaxGpusPerNode) {
    return InvalidArgument(where + "gpus must be between 0 and " + std::to_string(kMaxGpusPerNode));
  }
  if (spec.gpus > 0 && spec.gpu_memory <= 0) return InvalidArgument(where + "gpuMemory must be positive");
  if (spec.cpu_milli <= 0) return InvalidArgument(where + "cpus must be positive");
  if (spec.memory <= 0) return InvalidArgument(where + "memory must be positive");
  if (spec.numa_sockets < 1) return InvalidArgument(where + "numaSockets must be at least 1");
  if (spec.nvlink_domains < 1) return InvalidArgument(where + "nvlinkDomains must be at least 1");
  for (const auto* groups : {&spec.gpu_numa, &spec.gpu_nvlink}) {
    if (!groups->empty() && groups->size() != static_cast<std::size_t>(spec.gpus)) {
      return InvalidArgument(where + "names the groups of " + std::to_string(groups->size()) + " GPUs but has " +
                             std::to_string(spec.gpus));
    }
  }
  if (spec.gpu_mig.size() > static_cast<std::size_t>(spec.gpus)) {
    return InvalidArgument(where + "names the MIG devices of " + std::to_string(spec.gpu_mig.size()) + " GPUs but has " +
                           std::to_string(spec.gpus));
  }
  for (std::size_t gpu = 0; gpu < spec.gpu_mig.size(); ++gpu) {
    for (const std::string& profile : spec.gpu_mig[gpu]) {
      if (Result<MigProfile> parsed = ParseMigProfile(profile); !parsed.ok()) {
        return InvalidArgument(where + "GPU " + std::to_string(gpu) + ": " + parsed.status().message());
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Cluster> Cluster::Build(const std::vector<NodeSpec>& specs) {
  // An empty cluster is valid: a control plane starts with no nodes until
  // its agents register.
  Cluster cluster;
  std::unordered_map<std::string, std::int32_t> node_names;
  std::map<std::string, std::int32_t> model_ids;
  std::array<std::unordered_map<std::string, std::int32_t>, kTopologyLevels> group_ids;
  std::unordered_map<std::string, std::string> leaf_spine;  // a leaf sits under exactly one spine
  std::unordered_map<std::string, std::int32_t> nvlink_ids;  // every NVLink domain, local or multi-node

  const auto group_for = [&](int level, const std::string& name) {
    auto [it, inserted] = group_ids[level].try_emplace(name, static_cast<std::int32_t>(cluster.groups_[level].size()));
    if (inserted) cluster.groups_[level].push_back(NodeGroup{name, {}});
    return it->second;
  };
  cluster.groups_[kLevelCluster].push_back(NodeGroup{"cluster", {}});

  for (const NodeSpec& spec : specs) {
    TESSERA_RETURN_IF_ERROR(ValidateSpec(spec));
    if (!node_names.emplace(spec.name, static_cast<std::int32_t>(cluster.nodes_.size())).second) {
      return InvalidArgument("node '" + spec.name + "' is defined twice");
    }
    if (auto [it, inserted] = leaf_spine.emplace(spec.leaf, spec.spine); !inserted && it->second != spec.spine) {
      return InvalidArgument("leaf '" + spec.leaf + "' is placed under spines '" + it->second + "' and '" +
                             spec.spine + "'; a leaf switch has one spine");
    }
    auto [model_it, new_model] = model_ids.try_emplace(spec.gpu_model, static_cast<std::int32_t>(cluster.pools_.size()));
    if (new_model && cluster.pools_.size() == 64) return InvalidArgument("a cluster has at most 64 GPU models");
    if (new_model) cluster.pools_.push_back(PoolIndex{spec.gpu_model, {}, 0, {}});

    Node node;
    node.name = spec.name;
    node.id = NodeId(static_cast<std::int32_t>(cluster.nodes_.size()));
    node.model = GpuModelId(model_it->second);
    node.first_gpu = GpuId(static_cast<std::int32_t>(cluster.gpus_.size()));
    node.gpu_count = spec.gpus;
    node.cpu_milli = spec.cpu_milli;
    node.memory = spec.memory;
    node.leaf = group_for(kLevelLeaf, spec.leaf);
    node.spine = group_for(kLevelSpine, spec.spine);
    if (!spec.nvlink_group.empty()) {
      node.nvlink_masks = {LowBits(spec.gpus)};
    } else {
      node.nvlink_masks = spec.gpu_nvlink.empty() ? SplitMasks(spec.gpus, spec.nvlink_domains) : GroupMasks(spec.gpu_nvlink);
    }
    node.numa_masks = spec.gpu_numa.empty() ? SplitMasks(spec.gpus, spec.numa_sockets) : GroupMasks(spec.gpu_numa);
    node.sharing = spec.sharing;
    if (!spec.nvlink_group.empty()) node.nvlink_group = group_for(kLevelNvlink, spec.nvlink_group);

    // Node-local NVLink domains get ids of their own; a multi-node domain is one id.
    for (std::int32_t local = 0; local < spec.gpus; ++local) {
      Gpu gpu;
      gpu.node = node.id;
      gpu.local_index = local;
      gpu.model = node.model;
      gpu.memory = spec.gpu_memory;
      if (static_cast<std::size_t>(local) < spec.gpu_mig.size()) {
        for (const std::string& profile : spec.gpu_mig[local]) gpu.mig.push_back({profile});
      }
      if (!gpu.mig.empty()) {
        gpu.shared_as = GpuSharing::kMig;
        node.sharing.Add(GpuSharing::kMig);
      }
      for (std::size_t s = 0; s < node.numa_masks.size(); ++s) {
        if (node.numa_masks[s] >> local & 1) gpu.numa = static_cast<std::int32_t>(s);
      }
      for (std::size_t d = 0; d < node.nvlink_masks.size(); ++d) {
        if (node.nvlink_masks[d] >> local & 1) {
          const std::string domain = spec.nvlink_group.empty() ? spec.name + "/nvlink" + std::to_string(d)
                                                               : spec.nvlink_group;
          auto [it, inserted] = nvlink_ids.try_emplace(domain, static_cast<std::int32_t>(nvlink_ids.size()));
          gpu.nvlink = NvlinkId(it->second);
        }
      }
      cluster.gpus_.push_back(gpu);
    }
    cluster.max_gpus_per_node_ = std::max(cluster.max_gpus_per_node_, spec.gpus);
    cluster.capacity_ += Resources{spec.gpus * 1000LL, spec.gpus * spec.gpu_memory, spec.cpu_milli, spec.memory};
    cluster.nodes_.push_back(std::move(node));
  }

  for (PoolIndex& pool : cluster.pools_) pool.buckets.resize(cluster.max_gpus_per_node_ + 1);
  for (const int level : kGroupLevels) {
    cluster.histograms_[level].assign(cluster.groups_[level].size() * cluster.stride(), 0);
    cluster.group_free_[level].assign(cluster.groups_[level].size(), 0);
    cluster.group_models_[level].assign(cluster.groups_[level].size(), 0);
  }
  for (Node& node : cluster.nodes_) {
    for (const int level : kGroupLevels) {
      const std::int32_t g = cluster.GroupIndexOf(node, level);
      if (g < 0) continue;
      cluster.groups_[level][g].nodes.push_back(node.id);
      cluster.group_models_[level][g] |= std::uint64_t{1} << node.model.value();
    }
    for (std::int32_t local = 0; local < node.gpu_count; ++local) cluster.RefreshGpu(cluster.gpus_[node.gpu(local).index()], node);
    cluster.Reindex(node);
    for (std::uint64_t mask : node.nvlink_masks) {
      cluster.max_domain_gpus_[kLevelNvlink] = std::max<std::int64_t>(cluster.max_domain_gpus_[kLevelNvlink], std::popcount(mask));
    }
  }
  cluster.max_domain_gpus_[static_cast<int>(TopologyLevel::kNode)] = cluster.max_gpus_per_node_;
  for (const int level : kGroupLevels) {
    for (const NodeGroup& group : cluster.groups_[level]) {
      std::int64_t gpus = 0;
      for (NodeId id : group.nodes) gpus += cluster.nodes_[id.index()].gpu_count;
      cluster.max_domain_gpus_[level] = std::max(cluster.max_domain_gpus_[level], gpus);
    }
  }
  return cluster;
}

GpuModelId Cluster::FindModel(std::string_view name) const {
  for (std::size_t i = 0; i < pools_.size(); ++i) {
    if (pools_[i].model_name == name) return GpuModelId(static_cast<std::int32_t>(i));
  }
  return GpuModelId();
}

std::string Cluster::ModelNames() const {
  std::string names;
  for (const PoolIndex& pool : pools_) names += (names.empty() ? "" : ", ") + pool.model_name;
  return names;
}

Result<std::uint64_t> Cluster::ResolveModels(std::string_view names) const {
  std::uint64_t mask = 0;
  while (!names.empty()) {
    const std::size_t bar = names.find('|');
    const std::string_view name = names.substr(0, bar);
    const GpuModelId id = FindModel(name);
    if (!id.valid()) {
      return NotFound("no node has GPU model '" + std::string(name) + "' (this cluster has " + ModelNames() + ")");
    }
    mask |= std::uint64_t{1} << id.value();
    names = bar == std::string_view::npos ? std::string_view() : names.substr(bar + 1);
  }
  return mask;
}

Result<NodeId> Cluster::FindNode(std::string_view name) const {
  for (const Node& node : nodes_) {
    if (node.name == name) return node.id;
  }
  return NotFound("no node named '" + std::string(name) + "'");
}

std::int32_t Cluster::GroupIndexOf(const Node& node, int level) const {
  switch (static_cast<TopologyLevel>(level)) {
    case TopologyLevel::kNvlink: return node.nvlink_group;
    case TopologyLevel::kNode: return node.id.value();
    case TopologyLevel::kLeaf: return node.leaf;
    case TopologyLevel::kSpine: return node.spine;
    case TopologyLevel::kCluster: return 0;
  }
  return -1;
}

std::int32_t Cluster::GroupOf(NodeId node, TopologyLevel level) const {
  return GroupIndexOf(nodes_[node.index()], static_cast<int>(level));
}

const NodeGroup& Cluster::Group(TopologyLevel level, std::int32_t group) const {
  return groups_[static_cast<int>(level)][group];
}

std::int64_t Cluster::GroupFreeGpus(TopologyLevel level, std::int32_t group) const {
  if (level == TopologyLevel::kNode) return std::max(0, nodes_[group].indexed_free);
  return group_free_[static_cast<int>(level)][group];
}

std::int64_t Cluster::GroupTasksThatFit(TopologyLevel level, std::int32_t group, std::int32_t gpus_per_task) const {
  if (level == TopologyLevel::kNode) return std::max(0, nodes_[group].indexed_free) / gpus_per_task;
  std::int64_t tasks = 0;
  for (std::int32_t k = gpus_per_task; k <= max_gpus_per_node_; ++k) {
    tasks += std::int64_t{k / gpus_per_task} * GroupNodesWithFree(level, group, k);
  }
  return tasks;
}

void Cluster::Apply(const TaskPlacement& task, int sign) {
  Node& node = nodes_[task.node.index()];
  node.used_cpu += sign * task.cpu_milli;
  node.used_memory += sign * task.memory;
  allocated_ += Resources{0, 0, task.cpu_milli, task.memory} * sign;
  for (const GpuShare& share : task.gpus) {
    Gpu& gpu = gpus_[share.gpu.index()];
    IndexPartial(gpu, share.gpu.value(), false);
    gpu.used_milli += sign * share.milli;
    gpu.used_memory += sign * share.memory;
    if (share.milli < 1000) {
      gpu.fraction_tenants += sign;
      if (sign > 0) gpu.shared_as = share.sharing;
    }
    if (share.mig >= 0) gpu.mig[static_cast<std::size_t>(share.mig)].used = sign > 0;
    allocated_.gpu_milli += sign * share.milli;
    allocated_.gpu_memory += sign * share.memory;
    RefreshGpu(gpu, node);
  }
  Reindex(node);
}

void Cluster::SetGpuHealthy(GpuId id, bool healthy) {
  Gpu& gpu = gpus_[id.index()];
  Node& node = nodes_[gpu.node.index()];
  IndexPartial(gpu, id.value(), false);
  gpu.healthy = healthy;
  RefreshGpu(gpu, node);
  Reindex(node);
}

void Cluster::SetSchedulable(NodeId id, bool schedulable) {
  Node& node = nodes_[id.index()];
  node.schedulable = schedulable;
  for (std::int32_t local = 0; local < node.gpu_count; ++local) {
    const GpuId gpu_id = node.gpu(local);
    IndexPartial(gpus_[gpu_id.index()], gpu_id.value(), false);
    RefreshGpu(gpus_[gpu_id.index()], node);
  }
  Reindex(node);
}

void Cluster::SetImages(NodeId id, std::vector<std::uint64_t> images) {
  std::sort(images.begin(), images.end());
  nodes_[id.index()].images = std::move(images);
}

void Cluster::RefreshGpu(Gpu& gpu, Node& node) {
  const std::uint64_t bit = std::uint64_t{1} << gpu.local_index;
  node.free_mask = gpu.whole_free() ? (node.free_mask | bit) : (node.free_mask & ~bit);
  IndexPartial(gpu, node.first_gpu.value() + gpu.local_index, node.schedulable && gpu.Shareable());
}

void Cluster::IndexPartial(Gpu& gpu, std::int32_t id, bool present) {
  if (gpu.in_partial_index == present) return;
  auto& partial = pools_[gpu.model.index()].partial;
  if (present) {
    partial.emplace(gpu.free_milli(), id);
  } else {
    partial.erase({gpu.free_milli(), id});
  }
  gpu.in_partial_index = present;
}

void Cluster::Reindex(Node& node) {
  const std::int32_t free = node.schedulable ? node.free_gpus() : -1;
  if (free == node.indexed_free) return;
  PoolIndex& pool = pools_[node.model.index()];
  if (node.indexed_free >= 0) {
    auto& bucket = pool.buckets[node.indexed_free];
    const NodeId moved = bucket.back();
    bucket[node.bucket_pos] = moved;
    nodes_[moved.index()].bucket_pos = node.bucket_pos;
    bucket.pop_back();
    pool.free_whole -= node.indexed_free;
    for (const int level : kGroupLevels) {
      const std::int32_t g = GroupIndexOf(node, level);
      if (g < 0) continue;
      --histograms_[level][g * stride() + node.indexed_free];
      group_free_[level][g] -= node.indexed_free;
    }
  }
  node.indexed_free = free;
  node.bucket_pos = -1;
  if (free >= 0) {
    auto& bucket = pool.buckets[free];
    node.bucket_pos = static_cast<std::int32_t>(bucket.size());
    bucket.push_back(node.id);
    pool.free_whole += free;
    for (const int level : kGroupLevels) {
      const std::int32_t g = GroupIndexOf(node, level);
      if (g < 0) continue;
      ++histograms_[level][g * stride() + free];
      group_free_[level][g] += free;
    }
  }
}

std::vector<std::string> Cluster::AuditIndexes() const {
  std::vector<std::string> problems;
  std::vector<std::int64_t> free_whole(pools_.size(), 0);
  std::array<std::vector<std::int32_t>, kTopologyLevels> histograms;
  for (const int level : kGroupLevels) histograms[level].assign(histograms_[level].size(), 0);
  for (const Node& node : nodes_) {
    std::uint64_t mask = 0;
    for (std::int32_t local = 0; local < node.gpu_count; ++local) {
      if (gpus_[node.gpu(local).index()].whole_free()) mask |= std::uint64_t{1} << local;
    }
    if (mask != node.free_mask) problems.push_back("node " + node.name + ": free GPU mask is stale");
    const std::int32_t free = node.schedulable ? std::popcount(mask) : -1;
    if (free != node.indexed_free) {
      problems.push_back("node " + node.name + ": filed under " + std::to_string(node.indexed_free) +
                         " free GPUs, has " + std::to_string(free));
      continue;
    }
    if (free < 0) continue;
    const auto& bucket = pools_[node.model.index()].buckets[free];
    if (node.bucket_pos < 0 || node.bucket_pos >= static_cast<std::int32_t>(bucket.size()) ||
        bucket[node.bucket_pos] != node.id) {
      problems.push_back("node " + node.name + ": missing from its free-capacity bucket");
    }
    free_whole[node.model.index()] += free;
    for (const int level : kGroupLevels) {
      const std::int32_t g = GroupIndexOf(node, level);
      if (g >= 0) ++histograms[level][g * stride() + free];
    }
  }
  for (std::size_t p = 0; p < pools_.size(); ++p) {
    if (free_whole[p] != pools_[p].free_whole) problems.push_back("pool " + pools_[p].model_name + ": free count is stale");
    std::size_t shared = 0;
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      const Gpu& gpu = gpus_[i];
      if (gpu.model.index() != p) continue;
      const bool expect = nodes_[gpu.node.index()].schedulable && gpu.Shareable();
      if (expect != gpu.in_partial_index ||
          (expect && !pools_[p].partial.contains({gpu.free_milli(), static_cast<std::int32_t>(i)}))) {
        problems.push_back("gpu " + std::to_string(i) + ": shared-GPU index is stale");
      }
      shared += expect ? 1 : 0;
    }
    if (shared != pools_[p].partial.size()) problems.push_back("pool " + pools_[p].model_name + ": shared-GPU index has stray entries");
  }
  for (const int level : kGroupLevels) {
    if (histograms[level] != histograms_[level]) {
      problems.push_back(std::string("topology histogram of level ") + std::string(ToString(static_cast<TopologyLevel>(level))) + " is stale");
    }
    for (std::size_t g = 0; g < group_free_[level].size(); ++g) {
      std::int64_t free = 0;
      for (std::int32_t k = 1; k <= max_gpus_per_node_; ++k) free += std::int64_t{k} * histograms[level][g * stride() + k];
      if (free != group_free_[level][g]) {
        problems.push_back(std::string("free GPU count of a ") + std::string(ToString(static_cast<TopologyLevel>(level))) + " group is stale");
      }
    }
  }
  return problems;
}

}  // namespace tessera::model
