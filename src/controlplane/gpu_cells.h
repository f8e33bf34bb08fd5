// What one GPU is doing, in one letter: the cells of the dashboard's heatmap
// (GET /v1/cluster/gpus) and the classes of the utilization history.
#pragma once

#include <optional>
#include <string_view>

#include "model/cluster.h"

namespace tessera::controlplane {

enum class GpuCell : char {
  kFree = '.',       // nothing placed on it
  kAllocated = 'A',  // held whole, and busy (or no telemetry yet)
  kShared = 'F',     // held by fractions, some of it may be free
  kIdle = 'I',       // held, but under the idle threshold: allocated and wasted
  kUnhealthy = 'U',  // the agent reports it unhealthy
  kCordoned = 'C',   // free on a cordoned node: not offered to new work
  kLost = 'L',       // its node's agent stopped reporting
};

struct GpuContext {
  bool node_lost = false;
  bool node_cordoned = false;
  std::optional<double> utilization;  // percent, from the last heartbeat; none before the first
  double idle_threshold_percent = 1.0;
};

// Precedence: a lost node, then health, then whether it is held; a held GPU
// under the idle threshold shows as idle whether whole or shared, since idle
// allocations are what an operator looks for.
GpuCell ClassifyGpu(const model::Gpu& gpu, const GpuContext& context);

std::string_view CellName(GpuCell cell);  // "free", "allocated", ... for legends and counts
inline constexpr GpuCell kAllCells[] = {GpuCell::kFree,      GpuCell::kAllocated, GpuCell::kShared, GpuCell::kIdle,
                                        GpuCell::kUnhealthy, GpuCell::kCordoned,  GpuCell::kLost};

}  // namespace tessera::controlplane
