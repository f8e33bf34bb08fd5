// The part of the CUDA driver API (libcuda.so.1) that the vGPU shim wraps,
// declared by us so that building Tessera needs no CUDA toolkit.
//
// Names, values and layouts follow NVIDIA's cuda.h (the CUDA Driver API
// reference) and keep its spelling so that each can be looked up there.
// CUresult is a C enum, so an int in the ABI; handles are opaque pointers.
//
// Versioned entry points: cuda.h maps a plain name to the newest ABI with a
// macro (cuMemAlloc -> cuMemAlloc_v2), so the exported symbols a program
// links against carry the suffix. Programs built with per-thread default
// streams call the "_ptsz" variants of the stream-ordered calls instead.
// cuGetProcAddress takes the plain name, a CUDA version and flags, and
// answers the matching variant.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tessera::vgpu::cuda {

// NOLINTBEGIN(readability-identifier-naming): CUDA's names, on purpose.

using CUresult = int;
inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
inline constexpr CUresult CUDA_ERROR_INVALID_CONTEXT = 201;
inline constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;

using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT(google-runtime-int): the ABI's type
using cuuint64_t = std::uint64_t;
using CUmemGenericAllocationHandle = unsigned long long;  // NOLINT(google-runtime-int)

struct CUctx_st;
using CUcontext = CUctx_st*;
struct CUstream_st;
using CUstream = CUstream_st*;
struct CUfunc_st;
using CUfunction = CUfunc_st*;
struct CUmod_st;
using CUmodule = CUmod_st*;
struct CUmemPoolHandle_st;
using CUmemoryPool = CUmemPoolHandle_st*;

// cuGetProcAddress flags.
inline constexpr cuuint64_t CU_GET_PROC_ADDRESS_DEFAULT = 0;
inline constexpr cuuint64_t CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1;
inline constexpr cuuint64_t CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 2;
using CUdriverProcAddressQueryResult = int;  // C enum, filled by cuGetProcAddress_v2

// cuMemCreate's description of an allocation; only location.id is read.
struct CUmemLocation {
  int type;  // CUmemLocationType: 1 = device
  int id;    // the device ordinal
};
struct CUmemAllocationProp {
  int type;                  // CUmemAllocationType
  int requestedHandleTypes;  // CUmemAllocationHandleType
  CUmemLocation location;
  void* win32HandleMetaData;
  struct {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;  // NOLINT(google-runtime-int)
    unsigned char reserved[4];
  } allocFlags;
};

struct CUlaunchAttribute_st;
struct CUlaunchConfig {
  unsigned int gridDimX, gridDimY, gridDimZ;
  unsigned int blockDimX, blockDimY, blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute_st* attrs;
  unsigned int numAttrs;
};

// Signatures of the functions the shim wraps or calls.
using cuInit_t = CUresult (*)(unsigned int flags);
using cuCtxGetDevice_t = CUresult (*)(CUdevice* device);
using cuDeviceTotalMem_v2_t = CUresult (*)(std::size_t* bytes, CUdevice device);
using cuMemGetInfo_v2_t = CUresult (*)(std::size_t* free, std::size_t* total);
using cuMemAlloc_v2_t = CUresult (*)(CUdeviceptr* dptr, std::size_t bytes);
using cuMemAllocPitch_v2_t = CUresult (*)(CUdeviceptr* dptr, std::size_t* pitch, std::size_t width_bytes,
                                          std::size_t height, unsigned int element_size);
using cuMemAllocManaged_t = CUresult (*)(CUdeviceptr* dptr, std::size_t bytes, unsigned int flags);
using cuMemAllocAsync_t = CUresult (*)(CUdeviceptr* dptr, std::size_t bytes, CUstream stream);
using cuMemAllocFromPoolAsync_t = CUresult (*)(CUdeviceptr* dptr, std::size_t bytes, CUmemoryPool pool,
                                               CUstream stream);
using cuMemFree_v2_t = CUresult (*)(CUdeviceptr dptr);
using cuMemFreeAsync_t = CUresult (*)(CUdeviceptr dptr, CUstream stream);
using cuMemCreate_t = CUresult (*)(CUmemGenericAllocationHandle* handle, std::size_t size,
                                   const CUmemAllocationProp* prop, unsigned long long flags);  // NOLINT
using cuMemRelease_t = CUresult (*)(CUmemGenericAllocationHandle handle);
using cuLaunchKernel_t = CUresult (*)(CUfunction f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
                                      unsigned int block_x, unsigned int block_y, unsigned int block_z,
                                      unsigned int shared_bytes, CUstream stream, void** params, void** extra);
using cuLaunchKernelEx_t = CUresult (*)(const CUlaunchConfig* config, CUfunction f, void** params, void** extra);
using cuLaunchCooperativeKernel_t = CUresult (*)(CUfunction f, unsigned int grid_x, unsigned int grid_y,
                                                 unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                                                 unsigned int block_z, unsigned int shared_bytes, CUstream stream,
                                                 void** params);
using cuGetProcAddress_t = CUresult (*)(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags);
using cuGetProcAddress_v2_t = CUresult (*)(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                           CUdriverProcAddressQueryResult* status);

// NOLINTEND(readability-identifier-naming)

}  // namespace tessera::vgpu::cuda
