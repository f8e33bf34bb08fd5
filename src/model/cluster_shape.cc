#include "model/cluster_shape.h"

#include <algorithm>
#include <string_view>
#include <utility>

namespace tessera::model {
namespace {

// "node-00042": the prefix, then n zero-padded to at least `width` digits.
std::string Numbered(std::string_view prefix, std::int32_t n, std::size_t width) {
  const std::string digits = std::to_string(n);
  return std::string(prefix) + std::string(width > digits.size() ? width - digits.size() : 0, '0') + digits;
}

}  // namespace

std::vector<NodeSpec> GenerateNodes(const ClusterShape& shape) {
  std::vector<NodeSpec> nodes;
  nodes.reserve(static_cast<std::size_t>(std::max(shape.nodes, 0)));
  for (std::int32_t i = 0; i < shape.nodes; ++i) {
    NodeSpec node;
    node.name = Numbered("node-", i, 5);
    node.gpu_model = shape.gpu_model;
    node.gpus = shape.gpus_per_node;
    node.gpu_memory = shape.gpu_memory;
    node.cpu_milli = shape.cpu_milli;
    node.memory = shape.memory;
    node.numa_sockets = shape.numa_sockets;
    node.nvlink_domains = shape.nvlink_domains;
    node.sharing = shape.sharing;
    const std::int32_t leaf = i / shape.nodes_per_leaf;
    node.leaf = Numbered("leaf-", leaf, 3);
    node.spine = Numbered("spine-", leaf / shape.leaves_per_spine, 2);
    if (shape.nvlink_domain_nodes > 0) node.nvlink_group = Numbered("nvl-", i / shape.nvlink_domain_nodes, 4);
    nodes.push_back(std::move(node));
  }
  return nodes;
}

}  // namespace tessera::model
