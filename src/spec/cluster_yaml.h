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

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "model/cluster.h"
#include "model/cluster_shape.h"

namespace tessera::spec {

// "3125 nodes x 8 GPUs, 32 nodes per leaf, 16 leaves per spine"; the clauses
// after the first are optional and may also say "GPU model A100", "80Gi per GPU",
// "18 nodes per NVLink domain". model::GenerateNodes expands it.
Result<model::ClusterShape> ParseClusterShape(std::string_view text);

// Parses a Cluster document. `source` names the input in error messages
// ("cluster.yaml:12:5: spec.nodes[3].gpus: ...").
Result<std::vector<model::NodeSpec>> ParseClusterYaml(std::string_view text, std::string_view source);
// Reads a file path, or, when the argument is not a file, parses it as a shape.
Result<model::Cluster> LoadCluster(const std::string& file_or_shape);

}  // namespace tessera::spec
