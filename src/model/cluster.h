// The cluster model: the static topology (nodes, GPUs, NVLink domains, leaves,
// spines) together with the per-GPU and per-node allocation and health state,
// and the capacity indexes the scheduler's hot paths read.
//
// Every mutation goes through Allocate / Release / SetGpuHealthy /
// SetSchedulable, which keep the indexes exact, so a placement query never scans
// every GPU:
//   * per GPU model ("pool"), nodes are filed in buckets by their number of
//     whole free GPUs: best-fit for a task of g GPUs looks at bucket g first;
//   * per pool, GPUs that hold fractions are kept ordered by free milli-GPUs, so
//     a fractional task best-fits onto an already shared GPU in O(log n);
//   * per topology group (multi-node NVLink domain, leaf, spine, cluster), a
//     histogram counts nodes by free whole GPUs, so "how many 8-GPU tasks fit in
//     this leaf" is a dot product over at most 65 counters.
//
// A node holds GPUs of one model and at most 64 of them (a bit mask per node);
// a cluster has at most 64 GPU models (a task's accepted models are a mask).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "model/placement.h"
#include "model/resources.h"
#include "model/topology.h"

namespace tessera::model {

inline constexpr int kMaxGpusPerNode = 64;

// One MIG device of a GPU in MIG mode (model/mig.h): its profile, and whether
// a task holds it.
struct MigDevice {
  std::string profile;
  bool used = false;
};

struct Gpu {
  NodeId node;
  std::int32_t local_index = 0;  // position within the node, 0..gpu_count-1
  std::int32_t numa = 0;
  NvlinkId nvlink;
  GpuModelId model;
  std::int64_t memory = 0;  // bytes
  // State.
  std::int32_t used_milli = 0;
  std::int64_t used_memory = 0;
  GpuSharing shared_as = GpuSharing::kVgpu;  // the mode of its fractional tenants, while it has any
  std::int32_t fraction_tenants = 0;
  bool healthy = true;
  bool in_partial_index = false;
  // In MIG mode: its devices, as the agent found them. Such a GPU is never
  // whole and takes only tasks that ask for one of its devices' profiles.
  std::vector<MigDevice> mig;

  std::int32_t free_milli() const { return 1000 - used_milli; }
  std::int64_t free_memory() const { return memory - used_memory; }
  bool whole_free() const { return healthy && used_milli == 0 && used_memory == 0 && mig.empty(); }
  // The first free MIG device of the profile; -1 when none.
  std::int32_t FreeMig(std::string_view profile) const {
    for (std::size_t i = 0; i < mig.size(); ++i) {
      if (!mig[i].used && mig[i].profile == profile) return static_cast<std::int32_t>(i);
    }
    return -1;
  }
  // Whether a fraction of `milli` with `memory` bytes, sharing as `mode`, fits
  // now; for a MIG task (mode kMig), whether a device of `mig_profile` is free.
  bool Takes(std::int64_t milli, std::int64_t memory_asked, GpuSharing mode, std::string_view mig_profile = {}) const {
    if (!mig.empty() || mode == GpuSharing::kMig) return healthy && mode == GpuSharing::kMig && FreeMig(mig_profile) >= 0;
    return healthy && free_milli() >= milli && free_memory() >= memory_asked && (fraction_tenants == 0 || shared_as == mode);
  }
  // Whether it belongs in its pool's index of shared GPUs (on a schedulable
  // node): it holds fractions and has room, or it is in MIG mode with a free device.
  bool Shareable() const {
    if (!healthy) return false;
    if (mig.empty()) return used_milli > 0 && used_milli < 1000;
    for (const MigDevice& device : mig) {
      if (!device.used) return true;
    }
    return false;
  }
};

struct Node {
  std::string name;
  NodeId id;
  GpuModelId model;
  GpuId first_gpu;
  std::int32_t gpu_count = 0;
  std::int64_t cpu_milli = 0;
  std::int64_t memory = 0;
  // Topology groups. nvlink_group is the multi-node NVLink domain the node
  // belongs to, or -1 when its NVLink domains are inside the node.
  std::int32_t nvlink_group = -1;
  std::int32_t leaf = 0;
  std::int32_t spine = 0;
  std::vector<std::uint64_t> nvlink_masks;  // GPUs of each NVLink domain on this node
  std::vector<std::uint64_t> numa_masks;    // GPUs of each NUMA socket
  GpuSharingSet sharing = kDefaultGpuSharing;  // how its GPUs may be shared by fractions
  // State.
  std::int64_t used_cpu = 0;
  std::int64_t used_memory = 0;
  bool schedulable = true;      // false when cordoned or lost
  std::vector<std::uint64_t> images;  // ImageKeys of the images cached on it, sorted (as its agent last said)
  std::uint64_t free_mask = 0;  // bit i: GPU first_gpu+i is healthy and wholly free
  // Index bookkeeping (owned by Cluster).
  std::int32_t indexed_free = -1;  // bucket the node is filed under; -1 when not indexed
  std::int32_t bucket_pos = -1;

  std::int32_t free_gpus() const { return std::popcount(free_mask); }
  bool Holds(std::uint64_t image) const { return image != 0 && std::binary_search(images.begin(), images.end(), image); }
  bool Offers(GpuSharing mode) const { return sharing.Has(mode); }
  std::int64_t free_cpu() const { return cpu_milli - used_cpu; }
  std::int64_t free_memory() const { return memory - used_memory; }
  GpuId gpu(std::int32_t local) const { return GpuId(first_gpu.value() + local); }
};

// The index over one GPU model's nodes and GPUs.
struct PoolIndex {
  std::string model_name;
  std::vector<std::vector<NodeId>> buckets;  // [free whole GPUs] -> schedulable nodes
  std::int64_t free_whole = 0;               // whole free GPUs on schedulable nodes
  std::set<std::pair<std::int32_t, std::int32_t>> partial;  // (free milli, gpu) of shared GPUs
};

// A group of nodes at one topology level (a leaf, a spine, ...).
struct NodeGroup {
  std::string name;
  std::vector<NodeId> nodes;
};

// One node as the builder receives it.
struct NodeSpec {
  std::string name;
  std::string gpu_model = "generic";
  std::int32_t gpus = 0;
  std::int64_t gpu_memory = 0;
  std::int64_t cpu_milli = 0;
  std::int64_t memory = 0;
  std::int32_t numa_sockets = 1;
  std::int32_t nvlink_domains = 1;   // node-local NVLink domains, GPUs split evenly
  std::string nvlink_group;          // multi-node NVLink domain name; empty when node-local
  // The groups as an agent found them, GPU by GPU in index order: a number
  // per GPU that names its NUMA socket, or its node-local NVLink domain (GPUs
  // with one number form one group, whatever the number). When given, they
  // replace the even split of numa_sockets and nvlink_domains.
  std::vector<std::int32_t> gpu_numa;
  std::vector<std::int32_t> gpu_nvlink;
  // The MIG devices GPU by GPU in index order, as profile names; a GPU with
  // none (or beyond the list) is whole. A node with any offers kMig.
  std::vector<std::vector<std::string>> gpu_mig;
  std::string leaf = "leaf-0";
  std::string spine = "spine-0";
  GpuSharingSet sharing = kDefaultGpuSharing;
};

class Cluster {
 public:
  static Result<Cluster> Build(const std::vector<NodeSpec>& specs);

  // --- topology -----------------------------------------------------------
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Gpu>& gpus() const { return gpus_; }
  const Node& node(NodeId id) const { return nodes_[id.index()]; }
  const Gpu& gpu(GpuId id) const { return gpus_[id.index()]; }
  std::int32_t max_gpus_per_node() const { return max_gpus_per_node_; }
  // The most GPUs any single domain of the level has (an NVLink domain, a node, a leaf...).
  std::int64_t max_domain_gpus(TopologyLevel level) const { return max_domain_gpus_[static_cast<int>(level)]; }
  std::size_t model_count() const { return pools_.size(); }
  const std::string& model_name(GpuModelId id) const { return pools_[id.index()].model_name; }
  GpuModelId FindModel(std::string_view name) const;  // invalid id when absent
  // "H100|H200" -> the bits of those models' ids; an unknown name is an error
  // naming it and the models this cluster has.
  Result<std::uint64_t> ResolveModels(std::string_view names) const;
  std::string ModelNames() const;  // "H100, A100"
  const Resources& capacity() const { return capacity_; }
  Result<NodeId> FindNode(std::string_view name) const;

  // Topology groups for the node-grouping levels kNvlink (multi-node domains
  // only), kLeaf, kSpine and kCluster. kNode is answered with the node itself.
  std::int32_t GroupCount(TopologyLevel level) const {
    if (level == TopologyLevel::kNode) return static_cast<std::int32_t>(nodes_.size());
    return static_cast<std::int32_t>(groups_[static_cast<int>(level)].size());
  }
  std::int32_t GroupOf(NodeId node, TopologyLevel level) const;  // -1: none at that level
  const NodeGroup& Group(TopologyLevel level, std::int32_t group) const;
  // Whether any node of the group has GPUs of one of `models` (a mask of ids).
  bool GroupHasModels(TopologyLevel level, std::int32_t group, std::uint64_t models) const {
    return (group_models_[static_cast<int>(level)][group] & models) != 0;
  }
  // Whole free GPUs on the group's schedulable nodes (kNode: the node's), and
  // how many tasks of `gpus_per_task` whole GPUs they hold, node by node.
  std::int64_t GroupFreeGpus(TopologyLevel level, std::int32_t group) const;
  std::int64_t GroupTasksThatFit(TopologyLevel level, std::int32_t group, std::int32_t gpus_per_task) const;
  // Number of schedulable nodes in the group with exactly `free` whole free GPUs.
  std::int32_t GroupNodesWithFree(TopologyLevel level, std::int32_t group, std::int32_t free) const {
    return histograms_[static_cast<int>(level)][group * stride() + free];
  }

  // --- state and indexes ------------------------------------------------------
  const PoolIndex& pool(GpuModelId id) const { return pools_[id.index()]; }
  const Resources& allocated() const { return allocated_; }

  void Allocate(const TaskPlacement& task) { Apply(task, +1); }
  void Release(const TaskPlacement& task) { Apply(task, -1); }
  void SetGpuHealthy(GpuId gpu, bool healthy);
  void SetSchedulable(NodeId node, bool schedulable);
  // The images the node holds now (any order): a preference of placement only.
  void SetImages(NodeId node, std::vector<std::uint64_t> images);

  // Recomputes every index from the raw state and returns what disagrees; used
  // by the invariant checker. Empty when the indexes are exact.
  std::vector<std::string> AuditIndexes() const;

 private:
  Cluster() = default;
  std::int32_t stride() const { return max_gpus_per_node_ + 1; }
  void Apply(const TaskPlacement& task, int sign);
  void RefreshGpu(Gpu& gpu, Node& node);  // free mask bit and partial index of one GPU
  void Reindex(Node& node);               // bucket and histograms after a change
  void IndexPartial(Gpu& gpu, std::int32_t id, bool present);
  std::int32_t GroupIndexOf(const Node& node, int level) const;

  std::vector<Node> nodes_;
  std::vector<Gpu> gpus_;
  std::vector<PoolIndex> pools_;
  std::array<std::vector<NodeGroup>, kTopologyLevels> groups_;
  std::array<std::vector<std::int32_t>, kTopologyLevels> histograms_;
  std::array<std::vector<std::int64_t>, kTopologyLevels> group_free_;  // whole free GPUs per group: the histogram's sum
  std::array<std::vector<std::uint64_t>, kTopologyLevels> group_models_;  // bit m: has model m
  std::int32_t max_gpus_per_node_ = 0;
  std::array<std::int64_t, kTopologyLevels> max_domain_gpus_{};
  Resources capacity_;
  Resources allocated_;
};

}  // namespace tessera::model
