#include "controlplane/gpu_cells.h"

#include <gtest/gtest.h>

namespace tessera::controlplane {
namespace {

model::Gpu Held(std::int32_t milli, std::int32_t fraction_tenants = 0) {
  model::Gpu gpu;
  gpu.used_milli = milli;
  gpu.fraction_tenants = fraction_tenants;
  return gpu;
}

GpuContext Context(bool lost, bool cordoned, std::optional<double> utilization) {
  return {.node_lost = lost, .node_cordoned = cordoned, .utilization = utilization, .idle_threshold_percent = 1.0};
}

TEST(ClassifyGpu, FreeHeldAndShared) {
  EXPECT_EQ(ClassifyGpu(Held(0), {}), GpuCell::kFree);
  EXPECT_EQ(ClassifyGpu(Held(1000), {}), GpuCell::kAllocated);
  EXPECT_EQ(ClassifyGpu(Held(500, 1), {}), GpuCell::kShared);
  EXPECT_EQ(ClassifyGpu(Held(1000, 2), {}), GpuCell::kShared);  // two halves: full, still shared
}

TEST(ClassifyGpu, IdleOnlyWhenHeldAndMeasuredUnderTheThreshold) {
  const GpuContext quiet = Context(false, false, 0.5);
  EXPECT_EQ(ClassifyGpu(Held(1000), quiet), GpuCell::kIdle);
  EXPECT_EQ(ClassifyGpu(Held(250, 1), quiet), GpuCell::kIdle);
  EXPECT_EQ(ClassifyGpu(Held(0), quiet), GpuCell::kFree);  // free is not wasted
  const GpuContext busy = Context(false, false, 1.0);
  EXPECT_EQ(ClassifyGpu(Held(1000), busy), GpuCell::kAllocated);
  EXPECT_EQ(ClassifyGpu(Held(1000), Context(false, false, std::nullopt)), GpuCell::kAllocated);  // no telemetry yet
}

TEST(ClassifyGpu, LostBeforeUnhealthyBeforeCordoned) {
  model::Gpu sick = Held(0);
  sick.healthy = false;
  EXPECT_EQ(ClassifyGpu(sick, Context(true, false, std::nullopt)), GpuCell::kLost);
  EXPECT_EQ(ClassifyGpu(sick, Context(false, true, std::nullopt)), GpuCell::kUnhealthy);
  EXPECT_EQ(ClassifyGpu(Held(0), Context(false, true, std::nullopt)), GpuCell::kCordoned);
  EXPECT_EQ(ClassifyGpu(Held(1000), Context(false, true, std::nullopt)), GpuCell::kAllocated);  // still running its work
}

TEST(CellName, EveryCellHasOne) {
  for (const GpuCell cell : kAllCells) EXPECT_NE(CellName(cell), "unknown");
}

}  // namespace
}  // namespace tessera::controlplane
