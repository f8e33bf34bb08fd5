// A stand-in for libcuda.so.1, built only for the tests: it implements the few
// driver functions the vGPU shim wraps or calls, on a simulated GPU, so the
// shim's accounting, caps, cuGetProcAddress path and pacing run on machines
// without a GPU. Never installed, never loaded outside the tests.
//
// The simulated GPU, per process:
//   * memory: TESSERA_STANDIN_GPU_MEMORY bytes (default 16 GiB) per device,
//     TESSERA_STANDIN_GPUS devices (default 1); allocations past it fail;
//   * kernels: a launch of B blocks keeps the GPU busy B *
//     TESSERA_STANDIN_NS_PER_BLOCK ns (default 1000), queued behind earlier
//     launches; a queue more than 5 ms deep makes the launch wait, as a
//     full command buffer does. tessera_standin_busy_ns() is the busy time
//     elapsed so far, which the stand-in NVML reports as utilization.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "vgpu/cuda_driver_api.h"

#define STANDIN_EXPORT extern "C" __attribute__((visibility("default")))

using namespace tessera::vgpu::cuda;  // NOLINT(google-build-using-namespace)

namespace {

std::int64_t EnvInt(const char* name, std::int64_t fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::strtoll(value, nullptr, 10) : fallback;
}

std::int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Gpu {
  std::mutex mutex;
  const std::int64_t memory = EnvInt("TESSERA_STANDIN_GPU_MEMORY", std::int64_t{16} << 30);
  const int devices = static_cast<int>(EnvInt("TESSERA_STANDIN_GPUS", 1));
  const std::int64_t ns_per_block = EnvInt("TESSERA_STANDIN_NS_PER_BLOCK", 1000);
  std::unordered_map<int, std::int64_t> used;                          // per device
  std::unordered_map<CUdeviceptr, std::pair<int, std::int64_t>> allocations;  // address -> (device, bytes)
  CUdeviceptr next_address = 0x7f0000000000;
  int current = -1;  // device of the current context; -1: none
  std::int64_t busy_until = 0;
  std::int64_t scheduled = 0;  // ns of kernel time launched so far

  CUresult Allocate(int device, CUdeviceptr* out, std::size_t bytes) {
    std::lock_guard lock(mutex);
    if (device < 0 || device >= devices) return CUDA_ERROR_INVALID_CONTEXT;
    if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    const auto n = static_cast<std::int64_t>(bytes);
    if (used[device] + n > memory) return CUDA_ERROR_OUT_OF_MEMORY;
    used[device] += n;
    *out = next_address;
    allocations[next_address] = {device, n};
    next_address += (bytes + 511) / 512 * 512;
    return CUDA_SUCCESS;
  }
  CUresult Free(CUdeviceptr address) {
    std::lock_guard lock(mutex);
    const auto it = allocations.find(address);
    if (it == allocations.end()) return CUDA_ERROR_INVALID_VALUE;
    used[it->second.first] -= it->second.second;
    allocations.erase(it);
    return CUDA_SUCCESS;
  }
  CUresult Launch(std::uint64_t blocks) {
    std::int64_t wait_until = 0;
    {
      std::lock_guard lock(mutex);
      if (current < 0) return CUDA_ERROR_INVALID_CONTEXT;
      const std::int64_t now = NowNs();
      const std::int64_t cost = static_cast<std::int64_t>(blocks) * ns_per_block;
      busy_until = std::max(busy_until, now) + cost;
      scheduled += cost;
      constexpr std::int64_t kQueueNs = 5'000'000;
      if (busy_until - now > kQueueNs) wait_until = busy_until - kQueueNs;
    }
    if (wait_until > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(wait_until - NowNs()));
    return CUDA_SUCCESS;
  }
  std::int64_t BusyNs() {
    std::lock_guard lock(mutex);
    return scheduled - std::max<std::int64_t>(0, busy_until - NowNs());
  }
};

Gpu& TheGpu() {
  static Gpu* gpu = new Gpu();
  return *gpu;
}

CUresult Launch(unsigned int gx, unsigned int gy, unsigned int gz) {
  return TheGpu().Launch(std::max<std::uint64_t>(1, std::uint64_t{gx} * gy * gz));
}

}  // namespace

STANDIN_EXPORT std::int64_t tessera_standin_busy_ns() { return TheGpu().BusyNs(); }

STANDIN_EXPORT CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }
STANDIN_EXPORT CUresult cuDriverGetVersion(int* version) {
  *version = 12040;
  return CUDA_SUCCESS;
}
STANDIN_EXPORT CUresult cuDeviceGetCount(int* count) {
  *count = TheGpu().devices;
  return CUDA_SUCCESS;
}
STANDIN_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal < 0 || ordinal >= TheGpu().devices) return CUDA_ERROR_INVALID_VALUE;
  *device = ordinal;
  return CUDA_SUCCESS;
}
STANDIN_EXPORT CUresult cuDeviceTotalMem_v2(std::size_t* bytes, CUdevice device) {
  if (device < 0 || device >= TheGpu().devices) return CUDA_ERROR_INVALID_VALUE;
  *bytes = static_cast<std::size_t>(TheGpu().memory);
  return CUDA_SUCCESS;
}
// Contexts are the device ordinal plus one, so that none is null.
STANDIN_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  *context = reinterpret_cast<CUcontext>(static_cast<std::intptr_t>(device) + 1);
  return CUDA_SUCCESS;
}
STANDIN_EXPORT CUresult cuCtxSetCurrent(CUcontext context) {
  std::lock_guard lock(TheGpu().mutex);
  TheGpu().current = static_cast<int>(reinterpret_cast<std::intptr_t>(context)) - 1;
  return CUDA_SUCCESS;
}
STANDIN_EXPORT CUresult cuCtxGetDevice(CUdevice* device) {
  std::lock_guard lock(TheGpu().mutex);
  if (TheGpu().current < 0) return CUDA_ERROR_INVALID_CONTEXT;
  *device = TheGpu().current;
  return CUDA_SUCCESS;
}
STANDIN_EXPORT CUresult cuCtxSynchronize() {
  const std::int64_t until = [] {
    std::lock_guard lock(TheGpu().mutex);
    return TheGpu().busy_until;
  }();
  const std::int64_t now = NowNs();
  if (until > now) std::this_thread::sleep_for(std::chrono::nanoseconds(until - now));
  return CUDA_SUCCESS;
}

STANDIN_EXPORT CUresult cuMemGetInfo_v2(std::size_t* free, std::size_t* total) {
  Gpu& gpu = TheGpu();
  std::lock_guard lock(gpu.mutex);
  if (gpu.current < 0) return CUDA_ERROR_INVALID_CONTEXT;
  *total = static_cast<std::size_t>(gpu.memory);
  *free = static_cast<std::size_t>(gpu.memory - gpu.used[gpu.current]);
  return CUDA_SUCCESS;
}

STANDIN_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, std::size_t bytes) {
  return TheGpu().Allocate(TheGpu().current, dptr, bytes);
}
STANDIN_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, std::size_t* pitch, std::size_t width,
                                           std::size_t height, unsigned int) {
  *pitch = (width + 511) / 512 * 512;
  return TheGpu().Allocate(TheGpu().current, dptr, *pitch * height);
}
STANDIN_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, std::size_t bytes, unsigned int) {
  return TheGpu().Allocate(TheGpu().current, dptr, bytes);
}
STANDIN_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* dptr, std::size_t bytes, CUstream) {
  return TheGpu().Allocate(TheGpu().current, dptr, bytes);
}
STANDIN_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, std::size_t bytes, CUstream stream) {
  return cuMemAllocAsync(dptr, bytes, stream);
}
STANDIN_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, std::size_t bytes, CUmemoryPool, CUstream) {
  return TheGpu().Allocate(TheGpu().current, dptr, bytes);
}
STANDIN_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, std::size_t bytes, CUmemoryPool pool,
                                                     CUstream stream) {
  return cuMemAllocFromPoolAsync(dptr, bytes, pool, stream);
}
STANDIN_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) { return TheGpu().Free(dptr); }
STANDIN_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream) { return TheGpu().Free(dptr); }
STANDIN_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream) { return TheGpu().Free(dptr); }
STANDIN_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, std::size_t size,
                                    const CUmemAllocationProp* prop, unsigned long long) {  // NOLINT
  return TheGpu().Allocate(prop ? prop->location.id : -1, handle, size);
}
STANDIN_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) { return TheGpu().Free(handle); }

STANDIN_EXPORT CUresult cuModuleLoadData(CUmodule* module, const void*) {
  *module = reinterpret_cast<CUmodule>(std::intptr_t{1});
  return CUDA_SUCCESS;
}
STANDIN_EXPORT CUresult cuModuleGetFunction(CUfunction* function, CUmodule, const char*) {
  *function = reinterpret_cast<CUfunction>(std::intptr_t{1});
  return CUDA_SUCCESS;
}
STANDIN_EXPORT CUresult cuLaunchKernel(CUfunction, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int,
                                       unsigned int, unsigned int, unsigned int, CUstream, void**, void**) {
  return Launch(gx, gy, gz);
}
STANDIN_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction, unsigned int gx, unsigned int gy, unsigned int gz,
                                            unsigned int, unsigned int, unsigned int, unsigned int, CUstream, void**,
                                            void**) {
  return Launch(gx, gy, gz);
}
STANDIN_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction, void**, void**) {
  return Launch(config->gridDimX, config->gridDimY, config->gridDimZ);
}
STANDIN_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction, void**, void**) {
  return Launch(config->gridDimX, config->gridDimY, config->gridDimZ);
}
STANDIN_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction, unsigned int gx, unsigned int gy, unsigned int gz,
                                                  unsigned int, unsigned int, unsigned int, unsigned int, CUstream,
                                                  void**) {
  return Launch(gx, gy, gz);
}
STANDIN_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction, unsigned int gx, unsigned int gy, unsigned int gz,
                                                       unsigned int, unsigned int, unsigned int, unsigned int,
                                                       CUstream, void**) {
  return Launch(gx, gy, gz);
}

namespace {

// cuGetProcAddress: plain name, version and flags to the exported variant,
// as the real driver documents it.
struct ProcEntry {
  std::string_view base;
  enum { kOnly, kV2, kLegacy, kPerThread, kProcV1, kProcV2 } variant;
  void* fn;
};

CUresult LookUp(const char* symbol, void** pfn, int version, cuuint64_t flags);

CUresult GetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  return LookUp(symbol, pfn, version, flags);
}
CUresult GetProcAddressV2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* status) {
  const CUresult result = LookUp(symbol, pfn, version, flags);
  if (status) *status = result == CUDA_SUCCESS ? 0 : 1;
  return result;
}

#define STANDIN_PROC(base, variant, fn) {base, ProcEntry::variant, reinterpret_cast<void*>(&fn)}
const ProcEntry kProcs[] = {
    STANDIN_PROC("cuInit", kOnly, cuInit),
    STANDIN_PROC("cuDriverGetVersion", kOnly, cuDriverGetVersion),
    STANDIN_PROC("cuDeviceGetCount", kOnly, cuDeviceGetCount),
    STANDIN_PROC("cuDeviceGet", kOnly, cuDeviceGet),
    STANDIN_PROC("cuDeviceTotalMem", kV2, cuDeviceTotalMem_v2),
    STANDIN_PROC("cuDevicePrimaryCtxRetain", kOnly, cuDevicePrimaryCtxRetain),
    STANDIN_PROC("cuCtxSetCurrent", kOnly, cuCtxSetCurrent),
    STANDIN_PROC("cuCtxGetDevice", kOnly, cuCtxGetDevice),
    STANDIN_PROC("cuCtxSynchronize", kOnly, cuCtxSynchronize),
    STANDIN_PROC("cuMemGetInfo", kV2, cuMemGetInfo_v2),
    STANDIN_PROC("cuMemAlloc", kV2, cuMemAlloc_v2),
    STANDIN_PROC("cuMemAllocPitch", kV2, cuMemAllocPitch_v2),
    STANDIN_PROC("cuMemAllocManaged", kOnly, cuMemAllocManaged),
    STANDIN_PROC("cuMemAllocAsync", kLegacy, cuMemAllocAsync),
    STANDIN_PROC("cuMemAllocAsync", kPerThread, cuMemAllocAsync_ptsz),
    STANDIN_PROC("cuMemAllocFromPoolAsync", kLegacy, cuMemAllocFromPoolAsync),
    STANDIN_PROC("cuMemAllocFromPoolAsync", kPerThread, cuMemAllocFromPoolAsync_ptsz),
    STANDIN_PROC("cuMemFree", kV2, cuMemFree_v2),
    STANDIN_PROC("cuMemFreeAsync", kLegacy, cuMemFreeAsync),
    STANDIN_PROC("cuMemFreeAsync", kPerThread, cuMemFreeAsync_ptsz),
    STANDIN_PROC("cuMemCreate", kOnly, cuMemCreate),
    STANDIN_PROC("cuMemRelease", kOnly, cuMemRelease),
    STANDIN_PROC("cuModuleLoadData", kOnly, cuModuleLoadData),
    STANDIN_PROC("cuModuleGetFunction", kOnly, cuModuleGetFunction),
    STANDIN_PROC("cuLaunchKernel", kLegacy, cuLaunchKernel),
    STANDIN_PROC("cuLaunchKernel", kPerThread, cuLaunchKernel_ptsz),
    STANDIN_PROC("cuLaunchKernelEx", kLegacy, cuLaunchKernelEx),
    STANDIN_PROC("cuLaunchKernelEx", kPerThread, cuLaunchKernelEx_ptsz),
    STANDIN_PROC("cuLaunchCooperativeKernel", kLegacy, cuLaunchCooperativeKernel),
    STANDIN_PROC("cuLaunchCooperativeKernel", kPerThread, cuLaunchCooperativeKernel_ptsz),
    STANDIN_PROC("cuGetProcAddress", kProcV1, GetProcAddress),
    STANDIN_PROC("cuGetProcAddress", kProcV2, GetProcAddressV2),
};
#undef STANDIN_PROC

CUresult LookUp(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  for (const ProcEntry& e : kProcs) {
    if (e.base != symbol) continue;
    const bool chosen = e.variant == ProcEntry::kOnly || (e.variant == ProcEntry::kV2 && version >= 3020) ||
                        (e.variant == ProcEntry::kLegacy && !per_thread) ||
                        (e.variant == ProcEntry::kPerThread && per_thread) ||
                        (e.variant == ProcEntry::kProcV1 && version < 12000) ||
                        (e.variant == ProcEntry::kProcV2 && version >= 12000);
    if (chosen) {
      *pfn = e.fn;
      return CUDA_SUCCESS;
    }
  }
  *pfn = nullptr;
  return CUDA_ERROR_NOT_FOUND;
}

}  // namespace

STANDIN_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  return GetProcAddress(symbol, pfn, version, flags);
}
STANDIN_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                                            CUdriverProcAddressQueryResult* status) {
  return GetProcAddressV2(symbol, pfn, version, flags, status);
}
