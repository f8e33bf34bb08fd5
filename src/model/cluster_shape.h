// A uniform cluster by its shape ("3125 nodes x 8 GPUs, 32 nodes per leaf, 16
// leaves per spine") and the nodes it stands for. The one place a shape
// becomes nodes: spec reads shapes from text and YAML (spec/cluster_yaml.h),
// tests and benchmarks write them in code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/quantity.h"
#include "model/cluster.h"

namespace tessera::model {

struct ClusterShape {
  std::int32_t nodes = 0;
  std::int32_t gpus_per_node = 8;
  std::string gpu_model = "H100";
  std::int64_t gpu_memory = 80 * kGiB;
  std::int64_t cpu_milli = 128 * kMilli;
  std::int64_t memory = 1024 * kGiB;
  std::int32_t nodes_per_leaf = 32;
  std::int32_t leaves_per_spine = 16;
  std::int32_t numa_sockets = 2;
  std::int32_t nvlink_domains = 1;  // node-local NVLink domains per node, GPUs split evenly
  // 0: NVLink stays inside each node (nvlink_domains); N > 0: each run of N
  // nodes shares one NVLink domain (NVL72: 18 nodes x 4 GPUs).
  std::int32_t nvlink_domain_nodes = 0;
  GpuSharingSet sharing = kDefaultGpuSharing;  // how fractions may share the GPUs
};

// Nodes named node-00000.., in order; leaves leaf-000.. of nodes_per_leaf
// nodes, spines spine-00.. of leaves_per_spine leaves (both at least 1),
// multi-node NVLink domains nvl-0000...
std::vector<NodeSpec> GenerateNodes(const ClusterShape& shape);

}  // namespace tessera::model
