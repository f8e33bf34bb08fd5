// Topology levels, from the tightest interconnect to the whole cluster.
//
// The tree is cluster -> spine -> leaf switch (rack) -> node -> NUMA socket ->
// NVLink domain -> GPU. NVLink domains are usually inside one node (a DGX's
// NVSwitch), but NVL72-style racks put 18 nodes into one NVLink domain; both are
// the level kNvlink. A gang's topology constraint names the level whose single
// domain must (required) or should (preferred) hold all of its tasks.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tessera::model {

enum class TopologyLevel : std::uint8_t { kNvlink = 0, kNode, kLeaf, kSpine, kCluster };
inline constexpr int kTopologyLevels = 5;

std::string_view ToString(TopologyLevel level);  // "nvlink-domain", "node", ...
std::optional<TopologyLevel> ParseTopologyLevel(std::string_view name);

struct TopologyConstraint {
  TopologyLevel level = TopologyLevel::kCluster;
  bool required = false;  // required: never place across the level; preferred: try it first
};

}  // namespace tessera::model
