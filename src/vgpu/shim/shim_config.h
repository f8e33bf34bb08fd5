// What the agent tells the shim through the task's environment
// (docs/gpu-sharing.md lists the variables).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::vgpu {

struct ShimConfig {
  std::string task;                  // TESSERA_VGPU_TASK: the ledger's name for the task
  std::vector<std::string> ledgers;  // TESSERA_VGPU_LEDGERS: one per CUDA device ordinal, ':'-separated
  std::int64_t memory_limit = 0;     // TESSERA_VGPU_MEMORY_LIMIT: bytes per GPU; 0: memory not capped
  std::int64_t burst_limit = 0;      // TESSERA_VGPU_BURST_LIMIT: bytes past the cap it may borrow
  int compute_percent = 100;         // TESSERA_VGPU_COMPUTE_PERCENT: 1..100; 100: launches not paced
  std::vector<unsigned int> nvml_indices;  // TESSERA_VGPU_NVML_INDICES: NVML index of each ordinal
  std::int64_t reclaim_wait_ms = 60'000;   // TESSERA_VGPU_RECLAIM_WAIT_MS: how long a guaranteed allocation waits
  bool verbose = false;                    // TESSERA_VGPU_VERBOSE=1: log every grant, not only refusals

  static ShimConfig FromEnvironment();
};

}  // namespace tessera::vgpu
