#include "sched/plugins/topology_packing.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "sched/plugins/unknown_gpu_model.h"

namespace tessera::sched {
namespace {

using model::Cluster;
using model::GpuId;
using model::Job;
using model::Node;
using model::NodeId;
using model::TaskPlacement;
using model::TaskRequest;
using model::TopologyLevel;

constexpr std::uint64_t kAllGpus = ~std::uint64_t{0};
constexpr int kSharedGpuScanLimit = 128;  // shared GPUs examined per fraction before opening a whole one
// Nodes of the best-fitting size examined, past the first usable one, for
// one that holds the task's image.
constexpr int kImageScanLimit = 64;

// A topology domain a gang is confined to. A node-local NVLink domain is a
// node plus the mask of its GPUs in that domain.
struct Domain {
  TopologyLevel level = TopologyLevel::kCluster;
  std::int32_t group = 0;  // the group at `level`; the node id at kNode and for local NVLink
  std::uint64_t gpu_mask = kAllGpus;
  bool single_node() const { return level == TopologyLevel::kNode || gpu_mask != kAllGpus; }
};

// The domains a gang is tried in, tightest first. An NVLink domain inside a
// node is tighter than the node; one spanning a rack of nodes (NVL72) sits
// between the node and the leaf.
enum class Tier { kLocalNvlink, kNode, kRackNvlink, kLeaf, kSpine, kCluster };
constexpr int kTiers = 6;

TopologyLevel LevelOf(Tier tier) {
  switch (tier) {
    case Tier::kLocalNvlink:
    case Tier::kRackNvlink: return TopologyLevel::kNvlink;
    case Tier::kNode: return TopologyLevel::kNode;
    case Tier::kLeaf: return TopologyLevel::kLeaf;
    case Tier::kSpine: return TopologyLevel::kSpine;
    case Tier::kCluster: return TopologyLevel::kCluster;
  }
  return TopologyLevel::kCluster;
}

// Takes `count` GPUs from `free`, preferring to stay inside one of `masks`
// (best fit: the mask with the fewest free GPUs that holds them all).
std::uint64_t TakeFrom(std::uint64_t free, int count, const std::vector<std::uint64_t>& masks) {
  std::uint64_t best = 0;
  int best_free = std::numeric_limits<int>::max();
  for (std::uint64_t mask : masks) {
    const int n = std::popcount(free & mask);
    if (n >= count && n < best_free) {
      best = mask;
      best_free = n;
    }
  }
  return best_free == std::numeric_limits<int>::max() ? 0 : free & best;
}

std::uint64_t LowestBits(std::uint64_t bits, int count) {
  std::uint64_t taken = 0;
  for (int i = 0; i < count; ++i) {
    const std::uint64_t low = bits & (~bits + 1);
    taken |= low;
    bits ^= low;
  }
  return taken;
}

class Attempt {
 public:
  Attempt(const Job& job, Cluster& cluster, const PlaceOptions& options, std::vector<TaskPlacement>& out,
          int max_domain_tries)
      : job_(job), cluster_(cluster), options_(options), out_(out), max_domain_tries_(max_domain_tries) {}

  bool Run();

 private:
  bool PlaceGang(const Domain& domain);
  // Places one task; `apply` tentatively allocates it so later tasks see it.
  bool PlaceTask(std::int32_t group, std::int32_t index, const Domain& domain, bool apply = true);
  bool Usable(const Node& node, const TaskRequest& r, const Domain& domain) const;
  bool InDomain(const Node& node, const Domain& domain) const;
  const Node* PickNode(const TaskRequest& r, int gpus, const Domain& domain) const;
  const Node* BestInGroup(const TaskRequest& r, int gpus, const Domain& domain) const;
  const Node* BestInBuckets(const TaskRequest& r, int gpus, const Domain& domain) const;
  GpuId PickSharedGpu(const TaskRequest& r, const Domain& domain) const;
  std::uint64_t PickGpus(const Node& node, int count, std::uint64_t allowed) const;
  std::vector<Domain> Candidates(Tier tier) const;
  bool Allowed(Tier tier) const;
  bool RackWithinConstraint(std::int32_t group) const;
  // Whether the group's free whole GPUs, counted node by node, could hold the
  // gang's mandatory tasks: a necessary condition, read from the histograms
  // in O(GPUs per node), that spares placing part of a gang before it fails.
  bool MayHold(TopologyLevel level, std::int32_t group) const;
  void Undo(std::size_t mark);
  // Whether a task of spread_group_ of the gang being placed is on the node.
  bool HoldsGroupTask(NodeId node) const;

  template <typename Fn>
  void ForEachPool(const TaskRequest& r, Fn&& fn) const {
    for (std::size_t p = 0; p < cluster_.model_count(); ++p) {
      const auto id = model::GpuModelId(static_cast<std::int32_t>(p));
      if (r.Accepts(id)) fn(cluster_.pool(id));
    }
  }

  const Job& job_;
  Cluster& cluster_;
  const PlaceOptions& options_;
  std::vector<TaskPlacement>& out_;
  int max_domain_tries_;
  std::int64_t need_whole_ = 0;    // whole GPUs of the mandatory tasks
  std::int32_t biggest_task_ = 0;  // whole GPUs of the largest task
  std::int32_t biggest_count_ = 0; // how many mandatory tasks have that size
  std::size_t applied_ = 0;        // tasks at the end of out_ tentatively allocated
  // While a task of a onePerNode group is placed: its group (else -1) and
  // where the gang's tasks begin in out_.
  std::int32_t spread_group_ = -1;
  std::size_t gang_mark_ = 0;
};

bool Attempt::HoldsGroupTask(NodeId node) const {
  // A gang has few tasks per group in practice (one per node): a scan.
  for (std::size_t t = gang_mark_; t < out_.size(); ++t) {
    if (out_[t].group == spread_group_ && out_[t].node == node) return true;
  }
  return false;
}

bool Attempt::InDomain(const Node& node, const Domain& domain) const {
  switch (domain.level) {
    case TopologyLevel::kCluster: return true;
    case TopologyLevel::kNode: return node.id.value() == domain.group;
    case TopologyLevel::kNvlink:
      return domain.gpu_mask != kAllGpus ? node.id.value() == domain.group : node.nvlink_group == domain.group;
    case TopologyLevel::kLeaf: return node.leaf == domain.group;
    case TopologyLevel::kSpine: return node.spine == domain.group;
  }
  return false;
}

bool Attempt::Usable(const Node& node, const TaskRequest& r, const Domain& domain) const {
  if (node.indexed_free < 0) return false;  // cordoned or lost
  if (spread_group_ >= 0 && HoldsGroupTask(node.id)) return false;  // onePerNode
  if (options_.excluded_nodes && (*options_.excluded_nodes)[node.id.index()]) return false;
  if (!r.Accepts(node.model)) return false;
  if (node.free_cpu() < r.cpu_milli || node.free_memory() < r.memory) return false;
  if (r.gpu_milli > 0 && (node.gpu_count == 0 || cluster_.gpu(node.first_gpu).memory < r.gpu_memory)) return false;
  if (r.fractional() && !node.Offers(r.sharing)) return false;
  return InDomain(node, domain);
}

// Best fit among the nodes of a pool's buckets: the fewest free GPUs that
// hold `gpus`; of those, one that holds the task's image when one is among
// the next kImageScanLimit nodes of that size.
const Node* Attempt::BestInBuckets(const TaskRequest& r, int gpus, const Domain& domain) const {
  const Node* fallback = nullptr;
  const Node* holder = nullptr;
  int scanned = 0;  // nodes examined after the fallback was found
  for (int k = gpus; k <= cluster_.max_gpus_per_node() && !fallback && !holder; ++k) {
    ForEachPool(r, [&](const model::PoolIndex& pool) {
      for (NodeId id : pool.buckets[k]) {
        if (holder || (fallback && (r.image == 0 || ++scanned > kImageScanLimit))) return;
        const Node& node = cluster_.node(id);
        if (!Usable(node, r, domain)) continue;
        if (node.Holds(r.image)) {
          holder = &node;
        } else if (!fallback) {
          fallback = &node;
        }
      }
    });
  }
  return holder ? holder : fallback;
}

// Best fit in the group; between nodes as full, one that holds the task's image.
const Node* Attempt::BestInGroup(const TaskRequest& r, int gpus, const Domain& domain) const {
  const Node* best = nullptr;
  bool best_holds = false;
  for (NodeId id : cluster_.Group(domain.level, domain.group).nodes) {
    const Node& node = cluster_.node(id);
    if (node.indexed_free < gpus) continue;
    const bool holds = node.Holds(r.image);
    if (best && (node.indexed_free > best->indexed_free || (node.indexed_free == best->indexed_free && (best_holds || !holds)))) continue;
    if (!Usable(node, r, domain)) continue;
    best = &node;
    best_holds = holds;
    if (node.indexed_free == gpus && (r.image == 0 || holds)) break;
  }
  return best;
}

const Node* Attempt::PickNode(const TaskRequest& r, int gpus, const Domain& domain) const {
  if (domain.single_node()) {
    const Node& node = cluster_.node(NodeId(domain.group));
    const bool fits = std::popcount(node.free_mask & domain.gpu_mask) >= gpus;
    return fits && Usable(node, r, domain) ? &node : nullptr;
  }
  if (domain.level == TopologyLevel::kCluster) return BestInBuckets(r, gpus, domain);
  return BestInGroup(r, gpus, domain);
}

std::uint64_t Attempt::PickGpus(const Node& node, int count, std::uint64_t allowed) const {
  const std::uint64_t free = node.free_mask & allowed;
  std::uint64_t from = TakeFrom(free, count, node.nvlink_masks);
  if (!from) from = TakeFrom(free, count, node.numa_masks);
  if (from) return LowestBits(from, count);
  // Spill over NVLink domains, fullest-free first, so the task spans as few as possible.
  std::vector<std::uint64_t> masks = node.nvlink_masks;
  std::sort(masks.begin(), masks.end(), [&](std::uint64_t a, std::uint64_t b) {
    return std::popcount(free & a) > std::popcount(free & b);
  });
  std::uint64_t taken = 0;
  for (std::uint64_t mask : masks) {
    const int want = count - std::popcount(taken);
    taken |= LowestBits(free & mask, std::min(want, std::popcount(free & mask)));
  }
  return taken;
}

// The shared GPU with the fewest free milli-GPUs that still holds the fraction.
GpuId Attempt::PickSharedGpu(const TaskRequest& r, const Domain& domain) const {
  GpuId best;
  std::int32_t best_free = std::numeric_limits<std::int32_t>::max();
  const auto consider = [&](GpuId id) {
    const model::Gpu& gpu = cluster_.gpu(id);
    if (r.FitsOn(gpu) && gpu.free_milli() < best_free &&
        (domain.gpu_mask >> gpu.local_index & 1) && Usable(cluster_.node(gpu.node), r, domain)) {
      best = id;
      best_free = gpu.free_milli();
    }
  };
  if (domain.level == TopologyLevel::kCluster) {
    // A MIG task has no whole GPU to open instead: it looks at every shared
    // GPU until it finds a device, however many fractions of other kinds come first.
    const int limit = r.sharing == model::GpuSharing::kMig ? std::numeric_limits<int>::max() : kSharedGpuScanLimit;
    ForEachPool(r, [&](const model::PoolIndex& pool) {
      int scanned = 0;
      for (auto it = pool.partial.lower_bound({static_cast<std::int32_t>(r.gpu_milli), -1});
           it != pool.partial.end() && it->first < best_free && scanned < limit; ++it, ++scanned) {
        consider(GpuId(it->second));
      }
    });
    return best;
  }
  const std::vector<NodeId> single{NodeId(domain.group)};
  const auto& nodes = domain.single_node() ? single : cluster_.Group(domain.level, domain.group).nodes;
  for (NodeId id : nodes) {
    const Node& node = cluster_.node(id);
    for (std::int32_t local = 0; local < node.gpu_count; ++local) {
      const model::Gpu& gpu = cluster_.gpu(node.gpu(local));
      if (gpu.in_partial_index) consider(node.gpu(local));
    }
  }
  return best;
}

bool Attempt::PlaceTask(std::int32_t group, std::int32_t index, const Domain& domain, bool apply) {
  const TaskRequest& r = job_.groups[group].request;
  spread_group_ = job_.groups[group].one_per_node ? group : -1;
  TaskPlacement task;
  task.group = group;
  task.index = index;
  task.cpu_milli = r.cpu_milli;
  task.memory = r.memory;
  if (r.fractional()) {
    GpuId gpu = PickSharedGpu(r, domain);
    if (!gpu.valid()) {
      if (r.sharing == model::GpuSharing::kMig) return false;  // MIG devices are made by the node, not here
      const Node* node = PickNode(r, 1, domain);
      if (!node) return false;
      gpu = node->gpu(std::countr_zero(PickGpus(*node, 1, domain.gpu_mask)));
    }
    task.node = cluster_.gpu(gpu).node;
    task.gpus.push_back(r.ShareOn(gpu, cluster_.gpu(gpu)));
  } else {
    const int count = r.whole_gpus();
    const Node* node = PickNode(r, count, domain);
    if (!node) return false;
    task.node = node->id;
    for (std::uint64_t bits = count ? PickGpus(*node, count, domain.gpu_mask) : 0; bits; bits &= bits - 1) {
      const GpuId gpu = node->gpu(std::countr_zero(bits));
      task.gpus.push_back({gpu, 1000, cluster_.gpu(gpu).memory});
    }
  }
  spread_group_ = -1;
  if (apply) {
    cluster_.Allocate(task);
    ++applied_;
  }
  out_.push_back(std::move(task));
  return true;
}

void Attempt::Undo(std::size_t mark) {
  while (out_.size() > mark) {
    cluster_.Release(out_.back());
    out_.pop_back();
    --applied_;
  }
}

bool Attempt::PlaceGang(const Domain& domain) {
  const std::size_t mark = out_.size();
  gang_mark_ = mark;
  // Largest tasks first: they have the fewest places to go.
  std::vector<std::int32_t> order(job_.groups.size());  // small: one entry per task group
  for (std::size_t g = 0; g < order.size(); ++g) order[g] = static_cast<std::int32_t>(g);
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    return job_.groups[a].request.gpu_milli > job_.groups[b].request.gpu_milli;
  });
  for (std::int32_t g : order) {
    for (std::int32_t i = 0; i < job_.groups[g].min_replicas; ++i) {
      if (!PlaceTask(g, i, domain)) {
        Undo(mark);
        return false;
      }
    }
  }
  // Optional members, as far as room and the quota headroom allow.
  std::int64_t held = 0;
  for (std::size_t t = mark; t < out_.size(); ++t) held += job_.groups[out_[t].group].request.gpu_milli;
  for (std::int32_t g : order) {
    const std::int64_t per_task = job_.groups[g].request.gpu_milli;
    for (std::int32_t i = job_.groups[g].min_replicas; i < job_.groups[g].replicas; ++i) {
      if (held + per_task > options_.max_gpu_milli || !PlaceTask(g, i, domain)) break;
      held += per_task;
    }
  }
  return true;
}

// Domains of a tier that may hold the gang, best fit first.
std::vector<Domain> Attempt::Candidates(Tier tier) const {
  std::vector<Domain> domains;
  const TopologyLevel level = LevelOf(tier);
  if (need_whole_ > cluster_.max_domain_gpus(level)) return domains;
  if (options_.within_level != TopologyLevel::kCluster) {
    if (level == options_.within_level && tier != Tier::kLocalNvlink) {
      if (MayHold(level, options_.within_group)) domains.push_back({level, options_.within_group, kAllGpus});
    } else if (tier == Tier::kLocalNvlink && options_.within_level == TopologyLevel::kNode) {
      // Within one node (victim search for a lone task): its NVLink domains.
      const Node& node = cluster_.node(NodeId(options_.within_group));
      for (std::uint64_t mask : node.nvlink_masks) {
        if (node.nvlink_group < 0 && std::popcount(node.free_mask & mask) >= need_whole_) {
          domains.push_back({level, options_.within_group, mask});
        }
      }
    }
    return domains;
  }
  if (tier == Tier::kCluster) {
    if (MayHold(level, 0)) domains.push_back(Domain{});
    return domains;
  }
  if (tier == Tier::kLocalNvlink || tier == Tier::kNode) {
    // Nodes with enough free GPUs, fewest first; for NVLink, the domain on
    // the node with the fewest free GPUs that holds the gang.
    TaskRequest probe;
    probe.models = job_.groups.front().request.models;
    for (int k = static_cast<int>(need_whole_); k <= cluster_.max_gpus_per_node(); ++k) {
      ForEachPool(probe, [&](const model::PoolIndex& pool) {
        for (NodeId id : pool.buckets[k]) {
          if (static_cast<int>(domains.size()) >= max_domain_tries_) return;
          const Node& node = cluster_.node(id);
          if (options_.excluded_nodes && (*options_.excluded_nodes)[id.index()]) continue;
          if (tier == Tier::kNode) {
            domains.push_back({level, id.value(), kAllGpus});
          } else if (node.nvlink_group < 0) {  // a rack-wide domain is its own tier
            const std::uint64_t free = TakeFrom(node.free_mask, static_cast<int>(need_whole_), node.nvlink_masks);
            for (std::uint64_t mask : node.nvlink_masks) {
              if (free && (free & mask) == free) domains.push_back({level, id.value(), mask});
            }
          }
        }
      });
    }
    // Between nodes as full, those that hold the gang's image first.
    if (const std::uint64_t image = job_.groups.front().request.image; image != 0) {
      std::stable_sort(domains.begin(), domains.end(), [&](const Domain& a, const Domain& b) {
        const Node& na = cluster_.node(NodeId(a.group));
        const Node& nb = cluster_.node(NodeId(b.group));
        return na.indexed_free != nb.indexed_free ? na.indexed_free < nb.indexed_free : na.Holds(image) && !nb.Holds(image);
      });
    }
    return domains;
  }
  // Node groups: rank by the histogram of free GPUs per node.
  std::vector<std::pair<std::int64_t, std::int32_t>> ranked;  // (free GPUs, group)
  for (std::int32_t g = 0; g < cluster_.GroupCount(level); ++g) {
    if (!MayHold(level, g)) continue;
    if (tier == Tier::kRackNvlink && !RackWithinConstraint(g)) continue;
    const std::uint64_t models = job_.groups.front().request.models;
    if (models != 0 && !cluster_.GroupHasModels(level, g, models)) continue;
    ranked.emplace_back(cluster_.GroupFreeGpus(level, g), g);
  }
  const std::size_t keep = std::min<std::size_t>(ranked.size(), static_cast<std::size_t>(max_domain_tries_));
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end());
  for (std::size_t i = 0; i < keep; ++i) domains.push_back({level, ranked[i].second, kAllGpus});
  return domains;
}

bool Attempt::MayHold(TopologyLevel level, std::int32_t group) const {
  if (cluster_.GroupFreeGpus(level, group) < need_whole_) return false;
  return biggest_task_ == 0 || cluster_.GroupTasksThatFit(level, group, biggest_task_) >= biggest_count_;
}

// A rack-wide NVLink domain may serve a leaf or spine constraint only if it
// lies inside one domain of that level.
bool Attempt::RackWithinConstraint(std::int32_t group) const {
  const TopologyLevel level = job_.topology.level;
  if (level == TopologyLevel::kNvlink || level == TopologyLevel::kCluster || !job_.topology.required) return true;
  const auto& nodes = cluster_.Group(TopologyLevel::kNvlink, group).nodes;
  const std::int32_t first = cluster_.GroupOf(nodes.front(), level);
  return std::all_of(nodes.begin(), nodes.end(), [&](NodeId n) { return cluster_.GroupOf(n, level) == first; });
}

// May the gang be placed in a tier under its topology constraint?
bool Attempt::Allowed(Tier tier) const {
  // Preferred, or no constraint: every tier, tightest first, so the gang sits
  // inside one L whenever one can hold it, and is never kept waiting for it.
  if (!job_.topology.required) return true;
  const TopologyLevel limit = job_.topology.level;
  switch (tier) {
    case Tier::kLocalNvlink: return true;
    case Tier::kNode: return limit >= TopologyLevel::kNode;
    case Tier::kRackNvlink: return limit == TopologyLevel::kNvlink || limit >= TopologyLevel::kLeaf;
    case Tier::kLeaf: return limit >= TopologyLevel::kLeaf;
    case Tier::kSpine: return limit >= TopologyLevel::kSpine;
    case Tier::kCluster: return limit == TopologyLevel::kCluster;
  }
  return false;
}

bool Attempt::Run() {
  const std::size_t mark = out_.size();
  gang_mark_ = mark;
  for (const model::TaskGroup& g : job_.groups) {
    const std::int32_t size = g.request.whole_gpus();
    need_whole_ += std::int64_t{size} * g.min_replicas;
    if (size > biggest_task_) {
      biggest_task_ = size;
      biggest_count_ = 0;
    }
    if (size == biggest_task_) biggest_count_ += g.min_replicas;
  }
  bool placed = false;
  // A lone task satisfies any level from the node up by itself; inside one
  // NVLink domain only if its GPUs are chosen so, which the level loop does.
  const bool nvlink_required = job_.topology.required && job_.topology.level == TopologyLevel::kNvlink;
  if (job_.single_task() && !nvlink_required) {
    // One task: nothing else must see it, so it is not applied at all.
    placed = PlaceTask(0, 0, Domain{options_.within_level, options_.within_group, kAllGpus}, false);
  } else {
    for (int t = 0; t < kTiers && !placed; ++t) {
      const auto tier = static_cast<Tier>(t);
      if (!Allowed(tier)) continue;
      for (const Domain& domain : Candidates(tier)) {
        if ((placed = PlaceGang(domain))) break;
      }
    }
  }
  // The caller binds the placement through its Statement; leave the cluster as found.
  for (std::size_t i = out_.size(); applied_ > 0 && i > mark; --i, --applied_) cluster_.Release(out_[i - 1]);
  return placed;
}

}  // namespace

PlaceVerdict TopologyPacking::Place(const Job& job, Cluster& cluster, const PlaceOptions& options,
                                    std::vector<TaskPlacement>& out) {
  if (auto never = NeverForUnknownGpuModel(job, cluster)) return *std::move(never);
  return Attempt(job, cluster, options, out, max_domain_tries_).Run() ? PlaceVerdict::Fits() : PlaceVerdict::NotNow();
}

}  // namespace tessera::sched
