#include "vgpu/shim/driver_symbols.h"

#include <dlfcn.h>
#include <link.h>

#include <array>
#include <atomic>
#include <cstring>

// The wrappers, defined in vgpu_shim.cc under the driver's exported names.
extern "C" {
#define TESSERA_DECLARE_HOOK(name) void name();  // only their addresses are taken
TESSERA_DECLARE_HOOK(cuMemAlloc_v2)
TESSERA_DECLARE_HOOK(cuMemAllocPitch_v2)
TESSERA_DECLARE_HOOK(cuMemAllocManaged)
TESSERA_DECLARE_HOOK(cuMemAllocAsync)
TESSERA_DECLARE_HOOK(cuMemAllocAsync_ptsz)
TESSERA_DECLARE_HOOK(cuMemAllocFromPoolAsync)
TESSERA_DECLARE_HOOK(cuMemAllocFromPoolAsync_ptsz)
TESSERA_DECLARE_HOOK(cuMemFree_v2)
TESSERA_DECLARE_HOOK(cuMemFreeAsync)
TESSERA_DECLARE_HOOK(cuMemFreeAsync_ptsz)
TESSERA_DECLARE_HOOK(cuMemCreate)
TESSERA_DECLARE_HOOK(cuMemRelease)
TESSERA_DECLARE_HOOK(cuMemGetInfo_v2)
TESSERA_DECLARE_HOOK(cuDeviceTotalMem_v2)
TESSERA_DECLARE_HOOK(cuLaunchKernel)
TESSERA_DECLARE_HOOK(cuLaunchKernel_ptsz)
TESSERA_DECLARE_HOOK(cuLaunchKernelEx)
TESSERA_DECLARE_HOOK(cuLaunchKernelEx_ptsz)
TESSERA_DECLARE_HOOK(cuLaunchCooperativeKernel)
TESSERA_DECLARE_HOOK(cuLaunchCooperativeKernel_ptsz)
TESSERA_DECLARE_HOOK(cuGetProcAddress)
TESSERA_DECLARE_HOOK(cuGetProcAddress_v2)
#undef TESSERA_DECLARE_HOOK
}

namespace tessera::vgpu {
namespace {

// How cuGetProcAddress picks among a plain name's variants.
enum class Variant : std::uint8_t {
  kOnly,        // one ABI
  kV2,          // the "_v2" ABI, from CUDA 3.2 on (earlier versions: a 32-bit ABI we leave alone)
  kLegacy,      // the legacy-default-stream variant of a stream-ordered call
  kPerThread,   // its per-thread-default-stream ("_ptsz") variant
  kProcV1,      // cuGetProcAddress before CUDA 12.5
  kProcV2,      // cuGetProcAddress_v2
};

struct Entry {
  Symbol symbol;
  const char* exported;
  const char* base;
  Variant variant;
  void (*hook)();
};

#define TESSERA_ENTRY(sym, exported, base, variant) {Symbol::sym, #exported, base, Variant::variant, &::exported}
constexpr std::array<Entry, static_cast<std::size_t>(Symbol::kCount)> kEntries{{
    TESSERA_ENTRY(kMemAlloc, cuMemAlloc_v2, "cuMemAlloc", kV2),
    TESSERA_ENTRY(kMemAllocPitch, cuMemAllocPitch_v2, "cuMemAllocPitch", kV2),
    TESSERA_ENTRY(kMemAllocManaged, cuMemAllocManaged, "cuMemAllocManaged", kOnly),
    TESSERA_ENTRY(kMemAllocAsync, cuMemAllocAsync, "cuMemAllocAsync", kLegacy),
    TESSERA_ENTRY(kMemAllocAsyncPtsz, cuMemAllocAsync_ptsz, "cuMemAllocAsync", kPerThread),
    TESSERA_ENTRY(kMemAllocFromPoolAsync, cuMemAllocFromPoolAsync, "cuMemAllocFromPoolAsync", kLegacy),
    TESSERA_ENTRY(kMemAllocFromPoolAsyncPtsz, cuMemAllocFromPoolAsync_ptsz, "cuMemAllocFromPoolAsync", kPerThread),
    TESSERA_ENTRY(kMemFree, cuMemFree_v2, "cuMemFree", kV2),
    TESSERA_ENTRY(kMemFreeAsync, cuMemFreeAsync, "cuMemFreeAsync", kLegacy),
    TESSERA_ENTRY(kMemFreeAsyncPtsz, cuMemFreeAsync_ptsz, "cuMemFreeAsync", kPerThread),
    TESSERA_ENTRY(kMemCreate, cuMemCreate, "cuMemCreate", kOnly),
    TESSERA_ENTRY(kMemRelease, cuMemRelease, "cuMemRelease", kOnly),
    TESSERA_ENTRY(kMemGetInfo, cuMemGetInfo_v2, "cuMemGetInfo", kV2),
    TESSERA_ENTRY(kDeviceTotalMem, cuDeviceTotalMem_v2, "cuDeviceTotalMem", kV2),
    TESSERA_ENTRY(kLaunchKernel, cuLaunchKernel, "cuLaunchKernel", kLegacy),
    TESSERA_ENTRY(kLaunchKernelPtsz, cuLaunchKernel_ptsz, "cuLaunchKernel", kPerThread),
    TESSERA_ENTRY(kLaunchKernelEx, cuLaunchKernelEx, "cuLaunchKernelEx", kLegacy),
    TESSERA_ENTRY(kLaunchKernelExPtsz, cuLaunchKernelEx_ptsz, "cuLaunchKernelEx", kPerThread),
    TESSERA_ENTRY(kLaunchCooperativeKernel, cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", kLegacy),
    TESSERA_ENTRY(kLaunchCooperativeKernelPtsz, cuLaunchCooperativeKernel_ptsz, "cuLaunchCooperativeKernel",
                  kPerThread),
    TESSERA_ENTRY(kGetProcAddress, cuGetProcAddress, "cuGetProcAddress", kProcV1),
    TESSERA_ENTRY(kGetProcAddressV2, cuGetProcAddress_v2, "cuGetProcAddress", kProcV2),
}};
#undef TESSERA_ENTRY

constexpr int kCuda32 = 3020;   // the "_v2" memory ABI
constexpr int kCuda12 = 12000;  // cuGetProcAddress_v2 (with symbolStatus)

std::array<std::atomic<void*>, kEntries.size()> g_real{};

using DlsymFn = void* (*)(void*, const char*);
DlsymFn ResolveDlsym() {
  // dlsym moved into libc proper in glibc 2.34; older ones export it under
  // the architecture's first symbol version.
  for (const char* version : {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"}) {
    if (void* found = dlvsym(RTLD_NEXT, "dlsym", version)) return reinterpret_cast<DlsymFn>(found);
  }
  return nullptr;
}

void* Libcuda() {
  static void* handle = [] {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    return h ? h : dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  }();
  return handle;
}

bool Chosen(Variant variant, int cuda_version, cuda::cuuint64_t flags) {
  switch (variant) {
    case Variant::kOnly: return true;
    case Variant::kV2: return cuda_version >= kCuda32;
    case Variant::kLegacy: return (flags & cuda::CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) == 0;
    case Variant::kPerThread: return (flags & cuda::CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    case Variant::kProcV1: return cuda_version < kCuda12;
    case Variant::kProcV2: return cuda_version >= kCuda12;
  }
  return false;
}

}  // namespace

void* RealDlsym(void* handle, const char* name) {
  static const DlsymFn real = ResolveDlsym();
  return real ? real(handle, name) : nullptr;
}

void* NextDefinition(const void* caller, const char* name) {
  struct Walk {
    const void* caller;
    const char* name;
    bool past_caller = false;
    void* found = nullptr;
  } walk{caller, name};
  dl_iterate_phdr(
      [](dl_phdr_info* object, std::size_t, void* data) -> int {
        Walk& w = *static_cast<Walk*>(data);
        if (!w.past_caller) {
          const auto address = reinterpret_cast<ElfW(Addr)>(w.caller);
          for (int i = 0; i < object->dlpi_phnum; ++i) {
            const ElfW(Phdr)& segment = object->dlpi_phdr[i];
            const ElfW(Addr) start = object->dlpi_addr + segment.p_vaddr;
            if (segment.p_type == PT_LOAD && address >= start && address < start + segment.p_memsz) w.past_caller = true;
          }
          return 0;
        }
        if (object->dlpi_name == nullptr || object->dlpi_name[0] == '\0') return 0;
        void* handle = dlopen(object->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
        if (handle == nullptr) return 0;
        w.found = RealDlsym(handle, w.name);
        dlclose(handle);
        return w.found != nullptr ? 1 : 0;
      },
      &walk);
  return walk.found;
}

void* HookForExportedName(const char* name) {
  if (name == nullptr || name[0] != 'c' || name[1] != 'u') return nullptr;
  for (const Entry& e : kEntries) {
    if (std::strcmp(name, e.exported) == 0) return reinterpret_cast<void*>(e.hook);
  }
  return nullptr;
}

void* RealFunction(Symbol symbol) {
  std::atomic<void*>& slot = g_real[static_cast<std::size_t>(symbol)];
  void* fn = slot.load(std::memory_order_acquire);
  if (fn == nullptr && Libcuda() != nullptr) {
    fn = RealDlsym(Libcuda(), kEntries[static_cast<std::size_t>(symbol)].exported);
    if (fn != nullptr) slot.store(fn, std::memory_order_release);
  }
  return fn;
}

void* RealDriverFunction(const char* exported_name) {
  return Libcuda() ? RealDlsym(Libcuda(), exported_name) : nullptr;
}

void* WrapProcAddress(const char* base_name, void* driver_pfn, int cuda_version, cuda::cuuint64_t flags) {
  if (driver_pfn == nullptr || base_name == nullptr) return driver_pfn;
  // The variant whose real function the driver answered, if we know it...
  for (const Entry& e : kEntries) {
    if (std::strcmp(base_name, e.base) == 0 && RealFunction(e.symbol) == driver_pfn) {
      return reinterpret_cast<void*>(e.hook);
    }
  }
  // ...else the variant the documented rules pick, calling what the driver answered.
  for (const Entry& e : kEntries) {
    if (std::strcmp(base_name, e.base) != 0 || !Chosen(e.variant, cuda_version, flags)) continue;
    void* expected = nullptr;
    g_real[static_cast<std::size_t>(e.symbol)].compare_exchange_strong(expected, driver_pfn);
    return reinterpret_cast<void*>(e.hook);
  }
  return driver_pfn;
}

}  // namespace tessera::vgpu
