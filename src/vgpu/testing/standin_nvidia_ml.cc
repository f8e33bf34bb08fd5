// A stand-in for libnvidia-ml.so.1, built only for the tests: just what the
// vGPU shim's compute pacing reads. nvmlDeviceGetProcessUtilization answers
// one sample for the calling process, the share of wall time since the
// previous call that the stand-in driver (standin_cuda.cc) kept its
// simulated GPU busy.
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>

#include "vgpu/nvml_api.h"

#define STANDIN_EXPORT extern "C" __attribute__((visibility("default")))

using namespace tessera::vgpu::nvml;  // NOLINT(google-build-using-namespace)

namespace {
std::int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
std::int64_t g_last_busy = 0;
std::int64_t g_last_wall = 0;
}  // namespace

STANDIN_EXPORT nvmlReturn_t nvmlInit_v2() { return NVML_SUCCESS; }
STANDIN_EXPORT nvmlReturn_t nvmlShutdown() { return NVML_SUCCESS; }
STANDIN_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  *device = reinterpret_cast<nvmlDevice_t>(static_cast<std::intptr_t>(index) + 1);
  return NVML_SUCCESS;
}
STANDIN_EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t, nvmlProcessUtilizationSample_t* samples,
                                                            unsigned int* count, unsigned long long) {  // NOLINT
  if (samples == nullptr || *count < 1) {
    *count = 1;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  using BusyFn = std::int64_t (*)();
  static void* const driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  static const auto busy_ns = driver ? reinterpret_cast<BusyFn>(dlsym(driver, "tessera_standin_busy_ns")) : nullptr;
  if (busy_ns == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  const std::int64_t busy = busy_ns();
  const std::int64_t wall = NowNs();
  const bool first = g_last_wall == 0;
  const double percent = first ? 0 : 100.0 * static_cast<double>(busy - g_last_busy) / static_cast<double>(wall - g_last_wall);
  g_last_busy = busy;
  g_last_wall = wall;
  if (first) return NVML_ERROR_NOT_FOUND;
  samples[0] = {static_cast<unsigned int>(getpid()), static_cast<unsigned long long>(wall / 1000),  // NOLINT
                static_cast<unsigned int>(percent + 0.5), 0, 0, 0};
  *count = 1;
  return NVML_SUCCESS;
}
