// tessera-vgpu-probe: a small CUDA driver-API program that the vGPU tests and
// scripts/gpu-check.sh run under the shim, against the stand-in driver here
// and against the real one on a GPU machine.
//
// It finds the driver the way the CUDA 12 runtime (and so PyTorch) does:
// dlopen("libcuda.so.1"), dlsym("cuGetProcAddress"), then every other
// function through cuGetProcAddress. `--direct` looks each function up with
// dlsym instead, as programs built against the driver API do (`--default`
// names the first way explicitly).
//
//   tessera-vgpu-probe info
//       total=... free=... device_total=...      (what cuMemGetInfo/cuDeviceTotalMem answer)
//   tessera-vgpu-probe alloc CHUNK [--count N] [--api alloc|async|pool|create|managed|pitch] [--hold S]
//                             [--give-back-on SIGNAL --keep K]
//       allocates CHUNK bytes at a time until N chunks or a failure, prints
//       allocated=BYTES chunks=K result=CODE, holds them S seconds, frees them;
//       on SIGNAL while holding, frees all but K chunks and prints gave_back=BYTES
//       (a task answering its checkpoint signal by returning burst memory)
//   tessera-vgpu-probe bench-alloc COUNT CHUNK
//       COUNT cuMemAlloc + cuMemFree pairs of CHUNK bytes; prints ns_per_alloc_free
//   tessera-vgpu-probe launch SECONDS [--blocks B] [--iterations I] [--warmup W]
//       launches kernels of B blocks (each thread spinning I times) for
//       SECONDS; prints kernels_per_s and, on the stand-in, the utilization it
//       achieved, both measured after the first W seconds
//
// Exit code 0 when every call the command needs answered as expected (an
// allocation refused with CUDA_ERROR_OUT_OF_MEMORY is an expected answer).
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "vgpu/cuda_driver_api.h"

using namespace tessera::vgpu::cuda;  // NOLINT(google-build-using-namespace)

namespace {

volatile sig_atomic_t g_asked = 0;
void OnAsked(int) { g_asked = 1; }

using cuDeviceGet_t = CUresult (*)(CUdevice*, int);
using cuDevicePrimaryCtxRetain_t = CUresult (*)(CUcontext*, CUdevice);
using cuCtxSetCurrent_t = CUresult (*)(CUcontext);
using cuCtxSynchronize_t = CUresult (*)();
using cuModuleLoadData_t = CUresult (*)(CUmodule*, const void*);
using cuModuleGetFunction_t = CUresult (*)(CUfunction*, CUmodule, const char*);

// A kernel that spins `iterations` times and stores the count, so the loop is
// not optimised away. PTX is compiled by the driver, so no CUDA toolkit is needed.
constexpr const char* kSpinPtx = R"(
.version 7.0
.target sm_70
.address_size 64
.visible .entry spin(.param .u64 out, .param .u64 iterations) {
  .reg .u64 %rd<5>;
  .reg .pred %p;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [iterations];
  mov.u64 %rd3, 0;
LOOP:
  add.u64 %rd3, %rd3, 1;
  setp.lt.u64 %p, %rd3, %rd2;
  @%p bra LOOP;
  cvta.to.global.u64 %rd4, %rd1;
  st.global.u64 [%rd4], %rd3;
  ret;
}
)";

struct Driver {
  void* lib = nullptr;
  bool direct = false;
  cuGetProcAddress_t get_proc = nullptr;

  template <typename Fn>
  Fn Get(const char* base, const char* exported) {
    void* fn = nullptr;
    if (direct) {
      fn = dlsym(lib, exported);
    } else if (get_proc(base, &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT) != CUDA_SUCCESS) {
      fn = nullptr;
    }
    if (fn == nullptr) {
      std::fprintf(stderr, "probe: the driver has no %s\n", exported);
      std::exit(2);
    }
    return reinterpret_cast<Fn>(fn);
  }
};

std::int64_t Arg(const std::vector<std::string>& args, const std::string& flag, std::int64_t fallback) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag) return std::strtoll(args[i + 1].c_str(), nullptr, 10);
  }
  return fallback;
}
std::string StrArg(const std::vector<std::string>& args, const std::string& flag, const std::string& fallback) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag) return args[i + 1];
  }
  return fallback;
}

int Check(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return 0;
  std::fprintf(stderr, "probe: %s failed with CUresult %d\n", what, result);
  std::exit(2);
}

int Info(Driver& d) {
  std::size_t free = 0, total = 0, device_total = 0;
  Check(d.Get<cuMemGetInfo_v2_t>("cuMemGetInfo", "cuMemGetInfo_v2")(&free, &total), "cuMemGetInfo");
  Check(d.Get<cuDeviceTotalMem_v2_t>("cuDeviceTotalMem", "cuDeviceTotalMem_v2")(&device_total, 0), "cuDeviceTotalMem");
  std::printf("total=%zu free=%zu device_total=%zu\n", total, free, device_total);
  return 0;
}

int Alloc(Driver& d, const std::vector<std::string>& args) {
  const auto chunk = static_cast<std::size_t>(std::strtoull(args.at(1).c_str(), nullptr, 10));
  const std::int64_t count = Arg(args, "--count", 1 << 20);
  const std::string api = StrArg(args, "--api", "alloc");
  std::vector<CUdeviceptr> held;
  CUresult result = CUDA_SUCCESS;
  for (std::int64_t i = 0; i < count && result == CUDA_SUCCESS; ++i) {
    CUdeviceptr out = 0;
    if (api == "alloc") {
      result = d.Get<cuMemAlloc_v2_t>("cuMemAlloc", "cuMemAlloc_v2")(&out, chunk);
    } else if (api == "async") {
      result = d.Get<cuMemAllocAsync_t>("cuMemAllocAsync", "cuMemAllocAsync")(&out, chunk, nullptr);
    } else if (api == "pool") {
      result = d.Get<cuMemAllocFromPoolAsync_t>("cuMemAllocFromPoolAsync", "cuMemAllocFromPoolAsync")(
          &out, chunk, nullptr, nullptr);
    } else if (api == "managed") {
      result = d.Get<cuMemAllocManaged_t>("cuMemAllocManaged", "cuMemAllocManaged")(&out, chunk, 1);
    } else if (api == "pitch") {
      std::size_t pitch = 0;
      result = d.Get<cuMemAllocPitch_v2_t>("cuMemAllocPitch", "cuMemAllocPitch_v2")(&out, &pitch, chunk, 1, 4);
    } else if (api == "create") {
      CUmemAllocationProp prop{};
      prop.type = 1;
      prop.location = {1, 0};
      result = d.Get<cuMemCreate_t>("cuMemCreate", "cuMemCreate")(&out, chunk, &prop, 0);
    } else {
      std::fprintf(stderr, "probe: unknown --api %s\n", api.c_str());
      return 2;
    }
    if (result == CUDA_SUCCESS) held.push_back(out);
  }
  std::printf("allocated=%zu chunks=%zu result=%d\n", held.size() * chunk, held.size(), result);
  std::fflush(stdout);
  const auto free_one = [&](CUdeviceptr p) {
    if (api == "create") {
      Check(d.Get<cuMemRelease_t>("cuMemRelease", "cuMemRelease")(p), "cuMemRelease");
    } else if (api == "async" || api == "pool") {
      Check(d.Get<cuMemFreeAsync_t>("cuMemFreeAsync", "cuMemFreeAsync")(p, nullptr), "cuMemFreeAsync");
    } else {
      Check(d.Get<cuMemFree_v2_t>("cuMemFree", "cuMemFree_v2")(p), "cuMemFree");
    }
  };
  if (const std::int64_t signal = Arg(args, "--give-back-on", 0); signal > 0) std::signal(static_cast<int>(signal), OnAsked);
  const auto keep = static_cast<std::size_t>(Arg(args, "--keep", 0));
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(Arg(args, "--hold", 0));
  while (std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (g_asked && held.size() > keep) {
      const std::size_t returned = held.size() - keep;
      for (std::size_t i = keep; i < held.size(); ++i) free_one(held[i]);
      held.resize(keep);
      std::printf("gave_back=%zu\n", returned * chunk);
      std::fflush(stdout);
    }
  }
  for (CUdeviceptr p : held) free_one(p);
  return result == CUDA_SUCCESS || result == CUDA_ERROR_OUT_OF_MEMORY ? 0 : 2;
}

int BenchAlloc(Driver& d, const std::vector<std::string>& args) {
  const std::int64_t count = std::strtoll(args.at(1).c_str(), nullptr, 10);
  const auto chunk = static_cast<std::size_t>(std::strtoull(args.at(2).c_str(), nullptr, 10));
  const auto alloc = d.Get<cuMemAlloc_v2_t>("cuMemAlloc", "cuMemAlloc_v2");
  const auto free = d.Get<cuMemFree_v2_t>("cuMemFree", "cuMemFree_v2");
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t i = 0; i < count; ++i) {
    CUdeviceptr p = 0;
    Check(alloc(&p, chunk), "cuMemAlloc");
    Check(free(p), "cuMemFree");
  }
  const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  std::printf("ns_per_alloc_free=%.0f\n", ns / static_cast<double>(std::max<std::int64_t>(count, 1)));
  return 0;
}

int Launch(Driver& d, const std::vector<std::string>& args) {
  const double seconds = std::strtod(args.at(1).c_str(), nullptr);
  const auto blocks = static_cast<unsigned int>(Arg(args, "--blocks", 100));
  std::uint64_t iterations = static_cast<std::uint64_t>(Arg(args, "--iterations", 100000));
  CUmodule module = nullptr;
  CUfunction spin = nullptr;
  Check(d.Get<cuModuleLoadData_t>("cuModuleLoadData", "cuModuleLoadData")(&module, kSpinPtx), "cuModuleLoadData");
  Check(d.Get<cuModuleGetFunction_t>("cuModuleGetFunction", "cuModuleGetFunction")(&spin, module, "spin"),
        "cuModuleGetFunction");
  CUdeviceptr out = 0;
  Check(d.Get<cuMemAlloc_v2_t>("cuMemAlloc", "cuMemAlloc_v2")(&out, 8), "cuMemAlloc");
  void* params[] = {&out, &iterations};
  const auto launch = d.Get<cuLaunchKernel_t>("cuLaunchKernel", "cuLaunchKernel");
  const auto sync = d.Get<cuCtxSynchronize_t>("cuCtxSynchronize", "cuCtxSynchronize");
  using BusyFn = std::int64_t (*)();
  const auto busy_ns = reinterpret_cast<BusyFn>(dlsym(d.lib, "tessera_standin_busy_ns"));  // stand-in only
  const double warmup = std::strtod(StrArg(args, "--warmup", "0").c_str(), nullptr);
  const auto begin = std::chrono::steady_clock::now();
  const auto since = [](auto t) { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count(); };
  while (since(begin) < warmup) Check(launch(spin, blocks, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), "cuLaunchKernel");
  Check(sync(), "cuCtxSynchronize");
  const std::int64_t busy_start = busy_ns ? busy_ns() : 0;
  const auto start = std::chrono::steady_clock::now();
  std::int64_t kernels = 0;
  while (since(start) < seconds) {
    Check(launch(spin, blocks, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), "cuLaunchKernel");
    ++kernels;
  }
  Check(sync(), "cuCtxSynchronize");
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("kernels=%lld kernels_per_s=%.1f", static_cast<long long>(kernels), kernels / elapsed);  // NOLINT
  if (busy_ns) std::printf(" utilization=%.1f", 100.0 * static_cast<double>(busy_ns() - busy_start) / 1e9 / elapsed);
  std::printf("\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  Driver d;
  for (auto it = args.begin(); it != args.end();) {
    if (*it == "--direct" || *it == "--default") {
      d.direct = *it == "--direct";
      it = args.erase(it);
    } else {
      ++it;
    }
  }
  if (args.empty()) {
    std::fprintf(stderr, "usage: tessera-vgpu-probe [--direct] info | alloc CHUNK [...] | launch SECONDS [...]\n");
    return 2;
  }
  d.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (d.lib == nullptr) {
    std::fprintf(stderr, "probe: %s\n", dlerror());
    return 2;
  }
  d.get_proc = reinterpret_cast<cuGetProcAddress_t>(dlsym(d.lib, "cuGetProcAddress"));
  if (d.get_proc == nullptr) {
    std::fprintf(stderr, "probe: libcuda.so.1 has no cuGetProcAddress\n");
    return 2;
  }
  Check(d.Get<cuInit_t>("cuInit", "cuInit")(0), "cuInit");
  CUdevice device = 0;
  CUcontext context = nullptr;
  Check(d.Get<cuDeviceGet_t>("cuDeviceGet", "cuDeviceGet")(&device, 0), "cuDeviceGet");
  Check(d.Get<cuDevicePrimaryCtxRetain_t>("cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain")(&context, device),
        "cuDevicePrimaryCtxRetain");
  Check(d.Get<cuCtxSetCurrent_t>("cuCtxSetCurrent", "cuCtxSetCurrent")(context), "cuCtxSetCurrent");
  if (args[0] == "info") return Info(d);
  if (args[0] == "alloc" && args.size() >= 2) return Alloc(d, args);
  if (args[0] == "launch" && args.size() >= 2) return Launch(d, args);
  if (args[0] == "bench-alloc" && args.size() >= 3) return BenchAlloc(d, args);
  std::fprintf(stderr, "probe: unknown command %s\n", args[0].c_str());
  return 2;
}
