#include "model/topology.h"

#include <array>

namespace tessera::model {
namespace {
constexpr std::array<std::string_view, kTopologyLevels> kNames = {"nvlink-domain", "node", "leaf",
                                                                  "spine", "cluster"};
}

std::string_view ToString(TopologyLevel level) { return kNames[static_cast<int>(level)]; }

std::optional<TopologyLevel> ParseTopologyLevel(std::string_view name) {
  for (int i = 0; i < kTopologyLevels; ++i) {
    if (kNames[i] == name) return static_cast<TopologyLevel>(i);
  }
  if (name == "nvlink") return TopologyLevel::kNvlink;
  return std::nullopt;
}

}  // namespace tessera::model
