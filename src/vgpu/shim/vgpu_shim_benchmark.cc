// What the shim costs per call: the same driver calls made directly on the
// stand-in driver and through libtessera-vgpu.so, side by side in one run.
// The difference is the shim's own work (a ledger reservation under a
// process-shared mutex per allocation; a table lookup per launch when compute
// is not paced). Run: build/release/vgpu_shim_benchmark
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <benchmark/benchmark.h>

#include "vgpu/cuda_driver_api.h"

namespace {

using namespace tessera::vgpu::cuda;  // NOLINT(google-build-using-namespace)

struct Api {
  cuMemAlloc_v2_t alloc;
  cuMemFree_v2_t free;
  cuMemGetInfo_v2_t info;
  cuLaunchKernel_t launch;
};

Api Load(void* lib) {
  return {reinterpret_cast<cuMemAlloc_v2_t>(dlsym(lib, "cuMemAlloc_v2")),
          reinterpret_cast<cuMemFree_v2_t>(dlsym(lib, "cuMemFree_v2")),
          reinterpret_cast<cuMemGetInfo_v2_t>(dlsym(lib, "cuMemGetInfo_v2")),
          reinterpret_cast<cuLaunchKernel_t>(dlsym(lib, "cuLaunchKernel"))};
}

// [0]: the stand-in driver itself; [1]: the shim in front of it.
const Api* Apis() {
  static const Api* apis = [] {
    setenv("TESSERA_STANDIN_NS_PER_BLOCK", "0", 1);  // launches cost only their call
    setenv("TESSERA_VGPU_MEMORY_LIMIT", std::to_string(std::int64_t{8} << 30).c_str(), 1);
    setenv("TESSERA_VGPU_TASK", ("bench-" + std::to_string(getpid())).c_str(), 1);
    void* driver = dlopen(TESSERA_STANDIN_CUDA_PATH, RTLD_NOW | RTLD_GLOBAL);
    void* shim = dlopen(TESSERA_VGPU_SHIM_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!driver || !shim) {
      std::fprintf(stderr, "cannot load the stand-in driver or the shim: %s\n", dlerror());
      std::exit(1);
    }
    using Retain = CUresult (*)(CUcontext*, CUdevice);
    using SetCurrent = CUresult (*)(CUcontext);
    CUcontext context = nullptr;
    reinterpret_cast<Retain>(dlsym(driver, "cuDevicePrimaryCtxRetain"))(&context, 0);
    reinterpret_cast<SetCurrent>(dlsym(driver, "cuCtxSetCurrent"))(context);
    return new Api[2]{Load(driver), Load(shim)};
  }();
  return apis;
}

void BM_AllocFree(benchmark::State& state) {
  const Api& api = Apis()[state.range(0)];
  for (auto _ : state) {
    CUdeviceptr p = 0;
    if (api.alloc(&p, 1 << 20) != CUDA_SUCCESS) state.SkipWithError("cuMemAlloc failed");
    api.free(p);
  }
  state.SetLabel(state.range(0) ? "through the shim" : "stand-in driver");
}
BENCHMARK(BM_AllocFree)->Arg(0)->Arg(1);

void BM_MemGetInfo(benchmark::State& state) {
  const Api& api = Apis()[state.range(0)];
  std::size_t free = 0, total = 0;
  for (auto _ : state) benchmark::DoNotOptimize(api.info(&free, &total));
  state.SetLabel(state.range(0) ? "through the shim" : "stand-in driver");
}
BENCHMARK(BM_MemGetInfo)->Arg(0)->Arg(1);

void BM_LaunchKernel(benchmark::State& state) {
  const Api& api = Apis()[state.range(0)];
  for (auto _ : state) {
    benchmark::DoNotOptimize(api.launch(nullptr, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr));
  }
  state.SetLabel(state.range(0) ? "through the shim" : "stand-in driver");
}
BENCHMARK(BM_LaunchKernel)->Arg(0)->Arg(1);

}  // namespace
