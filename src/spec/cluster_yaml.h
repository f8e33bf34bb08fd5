// Cluster descriptions: a YAML file listing nodes, or a compact shape that is
// expanded into nodes ("3125 nodes x 8 GPUs, 32 nodes per leaf, 16 leaves per spine").
//
// YAML form (one document, kind Cluster):
//   apiVersion: tessera/v1
//   kind: Cluster
//   metadata: {name: lab}
//   spec:
//     generate: {nodes: 16, gpusPerNode: 8, gpuModel: H100, gpuMemory: 80Gi, cpus: 96,
//                memory: 1Ti, nodesPerLeaf: 4, leavesPerSpine: 2, numaSockets: 2,
//                nvlinkDomainNodes: 0}            # or:
//     nodes:
//       - {name: dgx-01, gpus: 8, gpuModel: H100, gpuMemory: 80Gi, cpus: 96, memory: 1Ti,
//          leaf: leaf-a, spine: spine-1, numaSockets: 2, nvlinkDomains: 1, nvlinkGroup: nvl72-a}
// generate and nodes may both appear; generated nodes come first.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/quantity.h"
#include "base/status.h"
#include "model/cluster.h"

namespace tessera::spec {

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
  // 0: every node is its own NVLink domain (NVSwitch inside the node);
  // N > 0: each run of N nodes shares one NVLink domain (NVL72: 18 nodes x 4 GPUs).
  std::int32_t nvlink_domain_nodes = 0;
  model::GpuSharingSet sharing = model::kDefaultGpuSharing;  // how fractions may share the GPUs
};

// "3125 nodes x 8 GPUs, 32 nodes per leaf, 16 leaves per spine"; the clauses
// after the first are optional and may also say "GPU model A100", "80Gi per GPU",
// "18 nodes per NVLink domain".
Result<ClusterShape> ParseClusterShape(std::string_view text);
// Nodes named node-00000.., leaves leaf-000.., spines spine-00..
std::vector<model::NodeSpec> GenerateNodes(const ClusterShape& shape);

// Parses a Cluster document. `source` names the input in error messages
// ("cluster.yaml:12:5: spec.nodes[3].gpus: ...").
Result<std::vector<model::NodeSpec>> ParseClusterYaml(std::string_view text, std::string_view source);
// Reads a file path, or, when the argument is not a file, parses it as a shape.
Result<model::Cluster> LoadCluster(const std::string& file_or_shape);

}  // namespace tessera::spec
