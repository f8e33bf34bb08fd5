// libtessera-vgpu.so: preloaded into a task (LD_PRELOAD) by the agent, it
// stands between the task and the CUDA driver and keeps the promises of a
// virtual GPU (docs/gpu-sharing.md):
//   * memory: every device allocation (cuMemAlloc*, cuMemAllocManaged,
//     cuMemAllocAsync, cuMemAllocFromPoolAsync, cuMemCreate) is reserved in the
//     GPU's MemoryLedger first, so the task's cap binds all its processes
//     together; past the cap (and any burst allowance) the call answers
//     CUDA_ERROR_OUT_OF_MEMORY without reaching the driver;
//   * size: cuMemGetInfo and cuDeviceTotalMem answer the cap, so frameworks
//     size their caches to the virtual GPU;
//   * compute: kernel launches wait on a LaunchPacer fed by NVML's
//     per-process utilization, holding the task near its share.
//
// The entry points are reached three ways, and all three lead here: a program
// linked against libcuda calls the exported names (the preload wins symbol
// resolution); a program that dlopens libcuda and calls dlsym gets them from
// our dlsym; and the CUDA 12 runtime (and so PyTorch) asks cuGetProcAddress,
// which we wrap so that it answers our functions for the symbols we wrap.
//
// Nothing here may throw into the application, and nothing allocates on the
// launch path.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "vgpu/cuda_driver_api.h"
#include "vgpu/launch_pacer.h"
#include "vgpu/memory_ledger.h"
#include "vgpu/shim/driver_symbols.h"
#include "vgpu/shim/shim_config.h"
#include "vgpu/shim/utilization_probe.h"

#define TESSERA_EXPORT extern "C" __attribute__((visibility("default")))

namespace tessera::vgpu {
namespace {

using namespace cuda;  // NOLINT(google-build-using-namespace): the driver's names read best bare here

void Log(const char* format, ...) __attribute__((format(printf, 1, 2)));
void Log(const char* format, ...) {
  char line[512];
  const int prefix = std::snprintf(line, sizeof line, "tessera-vgpu[%d]: ", getpid());
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(line + prefix, sizeof line - static_cast<std::size_t>(prefix) - 1, format, args);
  va_end(args);
  std::size_t length = static_cast<std::size_t>(prefix) + static_cast<std::size_t>(std::max(n, 0));
  length = std::min(length, sizeof line - 2);
  line[length++] = '\n';
  [[maybe_unused]] const ssize_t written = write(STDERR_FILENO, line, length);
}

double GiB(std::int64_t bytes) { return static_cast<double>(bytes) / (1 << 30); }

// What one allocation holds, to be given back when it is freed.
struct Held {
  int ordinal;
  std::int64_t bytes;
};

class Shim {
 public:
  Shim() : config_(ShimConfig::FromEnvironment()) {}

  const ShimConfig& config() const { return config_; }

  // The device of the calling thread's context; -1 without one.
  static int CurrentDevice() {
    static const auto get = reinterpret_cast<cuCtxGetDevice_t>(RealDriverFunction("cuCtxGetDevice"));
    CUdevice device = -1;
    return get && get(&device) == CUDA_SUCCESS ? device : -1;
  }

  bool Capped(int ordinal) const {
    return config_.memory_limit > 0 && ordinal >= 0 && static_cast<std::size_t>(ordinal) < config_.ledgers.size();
  }

  // Reserves, calls the driver, records; or answers out-of-memory.
  template <typename Call>
  CUresult Allocate(int ordinal, std::int64_t bytes, std::uint64_t key_out_of(void*), void* out, Call&& call) {
    if (!Capped(ordinal) || bytes <= 0) return call();
    MemoryLedger* ledger = LedgerFor(ordinal);
    if (ledger == nullptr) return call();
    const TaskTerms terms{config_.task, config_.memory_limit, config_.burst_limit};
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(config_.reclaim_wait_ms);
    bool waited = false;
    for (;;) {
      const Grant grant = ledger->Reserve(terms, getpid(), bytes, MonotonicNanos());
      if (grant == Grant::kGranted || grant == Grant::kBurst) {
        if (grant == Grant::kBurst || config_.verbose || waited) {
          Log("%s %.3f GiB on GPU %d (task holds %.3f GiB, cap %.3f GiB)",
              grant == Grant::kBurst ? "burst" : "granted", GiB(bytes), ordinal, GiB(ledger->TaskUsed(config_.task)),
              GiB(config_.memory_limit));
        }
        break;
      }
      if (grant == Grant::kRefused || std::chrono::steady_clock::now() >= deadline) {
        Log("out of memory: %.3f GiB more on GPU %d would pass the task's cap of %.3f GiB (burst %.3f GiB); "
            "it holds %.3f GiB",
            GiB(bytes), ordinal, GiB(config_.memory_limit), GiB(config_.burst_limit),
            GiB(ledger->TaskUsed(config_.task)));
        return CUDA_ERROR_OUT_OF_MEMORY;
      }
      if (!waited) Log("waiting for bursting tasks to give back %.3f GiB on GPU %d", GiB(bytes), ordinal);
      waited = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const CUresult result = call();
    if (result != CUDA_SUCCESS) {
      ledger->Release(config_.task, getpid(), bytes);
      return result;
    }
    std::lock_guard lock(mutex_);
    held_[key_out_of(out)] = {ordinal, bytes};
    return result;
  }

  // Calls the driver's free, then gives the memory back. The record leaves
  // the table first: once the driver has freed the address, another thread
  // may be given it and record its own allocation under it.
  template <typename Call>
  CUresult Free(std::uint64_t key, Call&& call) {
    std::optional<Held> held;
    {
      std::lock_guard lock(mutex_);
      if (const auto it = held_.find(key); it != held_.end()) {
        held = it->second;
        held_.erase(it);
      }
    }
    const CUresult result = call();
    if (!held) return result;
    if (result != CUDA_SUCCESS) {
      std::lock_guard lock(mutex_);
      held_.emplace(key, *held);  // still allocated
      return result;
    }
    if (MemoryLedger* ledger = LedgerFor(held->ordinal)) ledger->Release(config_.task, getpid(), held->bytes);
    return result;
  }

  // Shrinks what the driver reports to the virtual GPU.
  void Virtualize(int ordinal, std::size_t* free, std::size_t* total) {
    if (!Capped(ordinal)) return;
    MemoryLedger* ledger = LedgerFor(ordinal);
    const std::int64_t used = ledger ? ledger->TaskUsed(config_.task) : 0;
    const auto cap = static_cast<std::size_t>(config_.memory_limit);
    if (total) *total = cap;
    if (free) *free = std::min(*free, used >= config_.memory_limit ? 0 : cap - static_cast<std::size_t>(used));
  }

  // Waits as long as the pacer asks before a launch of `blocks` blocks.
  void Pace(std::uint64_t blocks) {
    if (config_.compute_percent >= 100 || !StartPacing()) return;
    std::int64_t wait = 0;
    {
      std::lock_guard lock(pacer_mutex_);
      wait = pacer_->Admit(static_cast<double>(blocks), MonotonicNanos());
    }
    if (wait > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
  }

 private:
  MemoryLedger* LedgerFor(int ordinal) {
    if (!Capped(ordinal)) return nullptr;
    std::lock_guard lock(mutex_);
    auto& slot = ledgers_[ordinal];
    if (!slot && !ledger_failed_[ordinal]) {
      std::size_t physical = 0;
      const auto total = Real<cuDeviceTotalMem_v2_t>(Symbol::kDeviceTotalMem);
      if (total) total(&physical, ordinal);
      std::string error;
      slot = MemoryLedger::Open(config_.ledgers[static_cast<std::size_t>(ordinal)], static_cast<std::int64_t>(physical),
                                &error);
      if (!slot) {
        ledger_failed_[ordinal] = true;
        Log("memory cap not enforced on GPU %d: %s", ordinal, error.c_str());
      }
    }
    return slot.get();
  }

  // Starts the utilization sampler once; false when pacing cannot work here.
  bool StartPacing() {
    std::call_once(pacing_once_, [this] {
      const unsigned int index = config_.nvml_indices.empty() ? 0 : config_.nvml_indices.front();
      std::string why;
      auto probe = UtilizationProbe::Open(index, &why);
      if (!probe) {
        Log("compute share of %d%% not enforced: %s", config_.compute_percent, why.c_str());
        return;
      }
      pacer_ = std::make_unique<LaunchPacer>(config_.compute_percent);
      std::thread([this, probe = std::move(probe)] { SampleForever(*probe); }).detach();
      pacing_ = true;
    });
    return pacing_;
  }

  void SampleForever(UtilizationProbe& probe) {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      std::vector<int> pids{getpid()};
      if (MemoryLedger* ledger = LedgerFor(0)) {
        for (const TaskUsage& t : ledger->Read().tasks) {
          if (t.id == config_.task) pids = t.pids;
        }
      }
      const double utilization = probe.Sample(pids);
      if (utilization < 0) continue;
      std::lock_guard lock(pacer_mutex_);
      pacer_->OnSample(utilization, MonotonicNanos());
    }
  }

  const ShimConfig config_;
  std::mutex mutex_;
  std::unordered_map<int, std::unique_ptr<MemoryLedger>> ledgers_;
  std::unordered_map<int, bool> ledger_failed_;
  std::unordered_map<std::uint64_t, Held> held_;  // device pointer or allocation handle -> what it holds
  std::once_flag pacing_once_;
  std::atomic<bool> pacing_{false};
  std::mutex pacer_mutex_;
  std::unique_ptr<LaunchPacer> pacer_;
};

Shim& TheShim() {
  static Shim* shim = new Shim();  // never destroyed: the driver may be called during exit
  return *shim;
}

std::uint64_t PointerKey(void* out) { return *static_cast<CUdeviceptr*>(out); }
std::uint64_t HandleKey(void* out) { return *static_cast<CUmemGenericAllocationHandle*>(out); }
// Allocation handles and device pointers are different namespaces; keep them apart.
constexpr std::uint64_t kHandleBit = std::uint64_t{1} << 63;
std::uint64_t TaggedHandleKey(void* out) { return HandleKey(out) | kHandleBit; }

// Sizes past what a signed count holds saturate (and are then refused).
std::int64_t Bytes(std::size_t n) {
  constexpr auto kMost = static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max());
  return static_cast<std::int64_t>(std::min(n, kMost));
}

template <Symbol S>
CUresult AllocAsync(CUdeviceptr* dptr, std::size_t bytes, CUstream stream) {
  return TheShim().Allocate(Shim::CurrentDevice(), Bytes(bytes), PointerKey, dptr, [&] {
    const auto real = Real<cuMemAllocAsync_t>(S);
    return real ? real(dptr, bytes, stream) : CUDA_ERROR_NOT_FOUND;
  });
}

template <Symbol S>
CUresult AllocFromPoolAsync(CUdeviceptr* dptr, std::size_t bytes, CUmemoryPool pool, CUstream stream) {
  return TheShim().Allocate(Shim::CurrentDevice(), Bytes(bytes), PointerKey, dptr, [&] {
    const auto real = Real<cuMemAllocFromPoolAsync_t>(S);
    return real ? real(dptr, bytes, pool, stream) : CUDA_ERROR_NOT_FOUND;
  });
}

template <Symbol S>
CUresult FreeAsync(CUdeviceptr dptr, CUstream stream) {
  return TheShim().Free(dptr, [&] {
    const auto real = Real<cuMemFreeAsync_t>(S);
    return real ? real(dptr, stream) : CUDA_ERROR_NOT_FOUND;
  });
}

std::uint64_t Blocks(unsigned int x, unsigned int y, unsigned int z) {
  return std::max<std::uint64_t>(1, std::uint64_t{x} * y * z);
}

template <Symbol S>
CUresult LaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                      unsigned int by, unsigned int bz, unsigned int shared, CUstream stream, void** params,
                      void** extra) {
  TheShim().Pace(Blocks(gx, gy, gz));
  const auto real = Real<cuLaunchKernel_t>(S);
  return real ? real(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra) : CUDA_ERROR_NOT_FOUND;
}

template <Symbol S>
CUresult LaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
  if (config) TheShim().Pace(Blocks(config->gridDimX, config->gridDimY, config->gridDimZ));
  const auto real = Real<cuLaunchKernelEx_t>(S);
  return real ? real(config, f, params, extra) : CUDA_ERROR_NOT_FOUND;
}

template <Symbol S>
CUresult LaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                 unsigned int by, unsigned int bz, unsigned int shared, CUstream stream,
                                 void** params) {
  TheShim().Pace(Blocks(gx, gy, gz));
  const auto real = Real<cuLaunchCooperativeKernel_t>(S);
  return real ? real(f, gx, gy, gz, bx, by, bz, shared, stream, params) : CUDA_ERROR_NOT_FOUND;
}

}  // namespace
}  // namespace tessera::vgpu

using namespace tessera::vgpu;        // NOLINT(google-build-using-namespace)
using namespace tessera::vgpu::cuda;  // NOLINT(google-build-using-namespace)

// --- memory ----------------------------------------------------------------

TESSERA_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, std::size_t bytes) {
  return TheShim().Allocate(Shim::CurrentDevice(), Bytes(bytes), PointerKey, dptr, [&] {
    const auto real = Real<cuMemAlloc_v2_t>(Symbol::kMemAlloc);
    return real ? real(dptr, bytes) : CUDA_ERROR_NOT_FOUND;
  });
}

TESSERA_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, std::size_t* pitch, std::size_t width,
                                           std::size_t height, unsigned int element_size) {
  // The driver chooses the pitch after the reservation; reserve rows padded to
  // 512 bytes, the most any current GPU pads them to.
  const std::size_t padded = (width + 511) / 512 * 512;
  const std::size_t total = height != 0 && padded > SIZE_MAX / height ? SIZE_MAX : padded * height;
  return TheShim().Allocate(Shim::CurrentDevice(), Bytes(total), PointerKey, dptr, [&] {
    const auto real = Real<cuMemAllocPitch_v2_t>(Symbol::kMemAllocPitch);
    return real ? real(dptr, pitch, width, height, element_size) : CUDA_ERROR_NOT_FOUND;
  });
}

TESSERA_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, std::size_t bytes, unsigned int flags) {
  // Managed memory can migrate to the host, but may all be resident on the GPU: count it there.
  return TheShim().Allocate(Shim::CurrentDevice(), Bytes(bytes), PointerKey, dptr, [&] {
    const auto real = Real<cuMemAllocManaged_t>(Symbol::kMemAllocManaged);
    return real ? real(dptr, bytes, flags) : CUDA_ERROR_NOT_FOUND;
  });
}

TESSERA_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* dptr, std::size_t bytes, CUstream stream) {
  return AllocAsync<Symbol::kMemAllocAsync>(dptr, bytes, stream);
}
TESSERA_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, std::size_t bytes, CUstream stream) {
  return AllocAsync<Symbol::kMemAllocAsyncPtsz>(dptr, bytes, stream);
}
TESSERA_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, std::size_t bytes, CUmemoryPool pool,
                                                CUstream stream) {
  return AllocFromPoolAsync<Symbol::kMemAllocFromPoolAsync>(dptr, bytes, pool, stream);
}
TESSERA_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, std::size_t bytes, CUmemoryPool pool,
                                                     CUstream stream) {
  return AllocFromPoolAsync<Symbol::kMemAllocFromPoolAsyncPtsz>(dptr, bytes, pool, stream);
}

TESSERA_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
  return TheShim().Free(dptr, [&] {
    const auto real = Real<cuMemFree_v2_t>(Symbol::kMemFree);
    return real ? real(dptr) : CUDA_ERROR_NOT_FOUND;
  });
}
TESSERA_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream) {
  return FreeAsync<Symbol::kMemFreeAsync>(dptr, stream);
}
TESSERA_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream) {
  return FreeAsync<Symbol::kMemFreeAsyncPtsz>(dptr, stream);
}

TESSERA_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, std::size_t size,
                                    const CUmemAllocationProp* prop, unsigned long long flags) {  // NOLINT
  constexpr int kDeviceLocation = 1;
  const int ordinal = prop && prop->location.type == kDeviceLocation ? prop->location.id : -1;
  return TheShim().Allocate(ordinal, Bytes(size), TaggedHandleKey, handle, [&] {
    const auto real = Real<cuMemCreate_t>(Symbol::kMemCreate);
    return real ? real(handle, size, prop, flags) : CUDA_ERROR_NOT_FOUND;
  });
}
TESSERA_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
  return TheShim().Free(handle | kHandleBit, [&] {
    const auto real = Real<cuMemRelease_t>(Symbol::kMemRelease);
    return real ? real(handle) : CUDA_ERROR_NOT_FOUND;
  });
}

TESSERA_EXPORT CUresult cuMemGetInfo_v2(std::size_t* free, std::size_t* total) {
  const auto real = Real<cuMemGetInfo_v2_t>(Symbol::kMemGetInfo);
  const CUresult result = real ? real(free, total) : CUDA_ERROR_NOT_FOUND;
  if (result == CUDA_SUCCESS) TheShim().Virtualize(Shim::CurrentDevice(), free, total);
  return result;
}

TESSERA_EXPORT CUresult cuDeviceTotalMem_v2(std::size_t* bytes, CUdevice device) {
  const auto real = Real<cuDeviceTotalMem_v2_t>(Symbol::kDeviceTotalMem);
  const CUresult result = real ? real(bytes, device) : CUDA_ERROR_NOT_FOUND;
  if (result == CUDA_SUCCESS) TheShim().Virtualize(device, nullptr, bytes);
  return result;
}

// --- kernel launches -------------------------------------------------------

TESSERA_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                       unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                                       CUstream stream, void** params, void** extra) {
  return LaunchKernel<Symbol::kLaunchKernel>(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}
TESSERA_EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                            unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                                            CUstream stream, void** params, void** extra) {
  return LaunchKernel<Symbol::kLaunchKernelPtsz>(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}
TESSERA_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig* config, CUfunction f, void** params, void** extra) {
  return LaunchKernelEx<Symbol::kLaunchKernelEx>(config, f, params, extra);
}
TESSERA_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config, CUfunction f, void** params,
                                              void** extra) {
  return LaunchKernelEx<Symbol::kLaunchKernelExPtsz>(config, f, params, extra);
}
TESSERA_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                                                  unsigned int bx, unsigned int by, unsigned int bz,
                                                  unsigned int shared, CUstream stream, void** params) {
  return LaunchCooperativeKernel<Symbol::kLaunchCooperativeKernel>(f, gx, gy, gz, bx, by, bz, shared, stream, params);
}
TESSERA_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
                                                       unsigned int gz, unsigned int bx, unsigned int by,
                                                       unsigned int bz, unsigned int shared, CUstream stream,
                                                       void** params) {
  return LaunchCooperativeKernel<Symbol::kLaunchCooperativeKernelPtsz>(f, gx, gy, gz, bx, by, bz, shared, stream,
                                                                      params);
}

// --- how programs find the functions ----------------------------------------

TESSERA_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags) {
  const auto real = Real<cuGetProcAddress_t>(Symbol::kGetProcAddress);
  if (!real) return CUDA_ERROR_NOT_FOUND;
  const CUresult result = real(symbol, pfn, cuda_version, flags);
  if (result == CUDA_SUCCESS && pfn) *pfn = WrapProcAddress(symbol, *pfn, cuda_version, flags);
  return result;
}

TESSERA_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                            CUdriverProcAddressQueryResult* status) {
  const auto real = Real<cuGetProcAddress_v2_t>(Symbol::kGetProcAddressV2);
  if (!real) return CUDA_ERROR_NOT_FOUND;
  const CUresult result = real(symbol, pfn, cuda_version, flags, status);
  if (result == CUDA_SUCCESS && pfn) *pfn = WrapProcAddress(symbol, *pfn, cuda_version, flags);
  return result;
}

// A program that dlopens libcuda and looks functions up by name gets ours,
// for the names the driver really has.
TESSERA_EXPORT void* dlsym(void* handle, const char* name) {  // NOLINT(bugprone-reserved-identifier)
  void* found = handle == RTLD_NEXT ? NextDefinition(__builtin_return_address(0), name) : RealDlsym(handle, name);
  if (found == nullptr) return nullptr;
  void* hook = HookForExportedName(name);
  return hook != nullptr ? hook : found;
}
