#include "controlplane/gpu_cells.h"

namespace tessera::controlplane {

GpuCell ClassifyGpu(const model::Gpu& gpu, const GpuContext& context) {
  if (context.node_lost) return GpuCell::kLost;
  if (!gpu.healthy) return GpuCell::kUnhealthy;
  if (gpu.used_milli == 0) return context.node_cordoned ? GpuCell::kCordoned : GpuCell::kFree;
  if (context.utilization && *context.utilization < context.idle_threshold_percent) return GpuCell::kIdle;
  return gpu.fraction_tenants > 0 ? GpuCell::kShared : GpuCell::kAllocated;
}

std::string_view CellName(GpuCell cell) {
  switch (cell) {
    case GpuCell::kFree: return "free";
    case GpuCell::kAllocated: return "allocated";
    case GpuCell::kShared: return "shared";
    case GpuCell::kIdle: return "idle";
    case GpuCell::kUnhealthy: return "unhealthy";
    case GpuCell::kCordoned: return "cordoned";
    case GpuCell::kLost: return "lost";
  }
  return "unknown";
}

}  // namespace tessera::controlplane
