// How busy a task keeps its GPU: the sum of NVML's per-process SM
// utilization over the task's processes, read from libnvidia-ml.so.1 loaded
// at run time. Used only for compute pacing.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace tessera::vgpu {

class UtilizationProbe {
 public:
  // nullptr with `why` set when NVML or the GPU cannot be reached.
  static std::unique_ptr<UtilizationProbe> Open(unsigned int nvml_index, std::string* why);
  // Percent of the time since the previous call that kernels of `pids` ran
  // (can exceed 100 when processes overlap); negative when NVML has no new sample.
  double Sample(const std::vector<int>& pids);
  ~UtilizationProbe();

 private:
  struct Api;
  UtilizationProbe();

  std::unique_ptr<Api> api_;
  void* device_ = nullptr;
  unsigned long long last_seen_us_ = 0;  // NOLINT(google-runtime-int): NVML's type
};

}  // namespace tessera::vgpu
