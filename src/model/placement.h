// Where one task of a job runs: a node, the GPUs (or GPU fractions) it holds
// there, and its CPU and memory. A job's placement is one TaskPlacement per task.
#pragma once

#include <cstdint>
#include <vector>

#include "base/strong_id.h"
#include "model/gpu_sharing.h"

namespace tessera::model {

struct NodeTag;
struct GpuTag;
struct GpuModelTag;
struct NvlinkTag;
using NodeId = StrongId<NodeTag>;
using GpuId = StrongId<GpuTag>;
using GpuModelId = StrongId<GpuModelTag>;
using NvlinkId = StrongId<NvlinkTag>;

struct GpuShare {
  GpuId gpu;
  std::int32_t milli = 0;       // 1000 for a whole GPU
  std::int64_t memory = 0;      // bytes of GPU memory held
  GpuSharing sharing = GpuSharing::kVgpu;  // how a fraction shares the GPU
  std::int32_t mig = -1;        // kMig: the MIG device held, an index into Gpu::mig
  bool operator==(const GpuShare&) const = default;
};

struct TaskPlacement {
  std::int32_t group = 0;       // index of the task group in the job
  std::int32_t index = 0;       // replica index within the group
  NodeId node;
  std::vector<GpuShare> gpus;
  std::int64_t cpu_milli = 0;
  std::int64_t memory = 0;
  bool operator==(const TaskPlacement&) const = default;
};

}  // namespace tessera::model
