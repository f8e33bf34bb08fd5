// The driver symbols the shim wraps: for each, the exported name a program
// links against, the plain name cuGetProcAddress is asked for, and where the
// real function lives.
//
// The real functions are found in libcuda.so.1 with the real dlsym (the shim
// overrides dlsym itself, see vgpu_shim.cc), or, failing that, taken from
// what the driver's cuGetProcAddress answered.
#pragma once

#include <cstdint>

#include "vgpu/cuda_driver_api.h"

namespace tessera::vgpu {

enum class Symbol : std::uint8_t {
  kMemAlloc,
  kMemAllocPitch,
  kMemAllocManaged,
  kMemAllocAsync,
  kMemAllocAsyncPtsz,
  kMemAllocFromPoolAsync,
  kMemAllocFromPoolAsyncPtsz,
  kMemFree,
  kMemFreeAsync,
  kMemFreeAsyncPtsz,
  kMemCreate,
  kMemRelease,
  kMemGetInfo,
  kDeviceTotalMem,
  kLaunchKernel,
  kLaunchKernelPtsz,
  kLaunchKernelEx,
  kLaunchKernelExPtsz,
  kLaunchCooperativeKernel,
  kLaunchCooperativeKernelPtsz,
  kGetProcAddress,
  kGetProcAddressV2,
  kCount,
};

// The shim's replacement for an exported name ("cuMemAlloc_v2"); nullptr when
// the shim does not wrap it.
void* HookForExportedName(const char* name);

// The real function behind a wrapped symbol; nullptr when the driver lacks it.
void* RealFunction(Symbol symbol);
template <typename Fn>
Fn Real(Symbol symbol) {
  return reinterpret_cast<Fn>(RealFunction(symbol));
}
// A driver function the shim calls without wrapping it (cuCtxGetDevice).
void* RealDriverFunction(const char* exported_name);

// What cuGetProcAddress should hand out for `base_name` when the driver
// answered `driver_pfn`: the shim's wrapper of the same variant, or the
// driver's own function when the shim does not wrap it.
void* WrapProcAddress(const char* base_name, void* driver_pfn, int cuda_version, cuda::cuuint64_t flags);

// dlsym as the C library implements it.
void* RealDlsym(void* handle, const char* name);
// dlsym(RTLD_NEXT, name) as asked from code at `caller`: the C library would
// search the objects loaded after the caller's, but called from the shim it
// searches after the shim, so the shim walks the objects itself.
void* NextDefinition(const void* caller, const char* name);

}  // namespace tessera::vgpu
