// The part of NVML's C API Tessera uses, declared by us so that building
// Tessera needs no CUDA toolkit and no driver: the agent's GPU discovery
// (node/gpu/nvml_provider.cc) and the vGPU shim's compute pacing
// (vgpu/shim/utilization_probe.cc) find these functions with dlsym in
// libnvidia-ml.so.1 at run time. It lives here, beside cuda_driver_api.h,
// because vgpu is the lowest module on the node side: node may include vgpu,
// never the other way (docs/architecture.md, "Layers").
//
// Names, values and struct layouts follow NVIDIA's nvml.h (the NVML API
// reference) exactly, and keep NVML's spelling so that each can be looked up
// there. Only what is declared here is used. Every function returns an
// nvmlReturn_t, a C enum and so an int in the ABI.
//
// Versioned entry points: NVML keeps old ABIs under the plain names and adds
// "_v2"/"_v3" for new ones; we resolve the versioned symbol whose struct we
// declare (nvmlDeviceGetPciInfo_v3 fills the nvmlPciInfo_t below; the plain
// nvmlDeviceGetPciInfo fills an older, smaller one).
#pragma once

namespace tessera::vgpu::nvml {

// NOLINTBEGIN(readability-identifier-naming): NVML's names, on purpose.

using nvmlReturn_t = int;
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
inline constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
inline constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;

struct nvmlDevice_st;  // opaque handles
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlEventSet_st;
using nvmlEventSet_t = nvmlEventSet_st*;

// Buffer sizes NVML documents for its string queries.
inline constexpr unsigned int NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned int NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned int NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16;
inline constexpr unsigned int NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32;
inline constexpr unsigned int NVML_NVLINK_MAX_LINKS = 18;  // Hopper's count; older GPUs answer fewer

struct nvmlMemory_t {
  unsigned long long total;  // bytes
  unsigned long long free;
  unsigned long long used;
};

struct nvmlUtilization_t {
  unsigned int gpu;     // percent of the sample period a kernel ran
  unsigned int memory;  // percent of it device memory was read or written
};

struct nvmlPciInfo_t {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];  // "0000:17:00.0"
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;  // vendor id in the low 16 bits
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];  // "00000000:17:00.0"
};

using nvmlEnableState_t = int;  // C enum
inline constexpr nvmlEnableState_t NVML_FEATURE_ENABLED = 1;

using nvmlTemperatureSensors_t = int;  // C enum
inline constexpr nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU = 0;

// Event types, a bit mask.
inline constexpr unsigned long long nvmlEventTypeSingleBitEccError = 0x1;
inline constexpr unsigned long long nvmlEventTypeDoubleBitEccError = 0x2;
inline constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x8;

// What nvmlEventSetWait_v2 fills (the plain nvmlEventSetWait fills only the
// first three fields).
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the Xid for nvmlEventTypeXidCriticalError (999: unknown), else 0
  unsigned int gpuInstanceId;    // MIG only
  unsigned int computeInstanceId;
};

// One sample of nvmlDeviceGetProcessUtilization (the vGPU shim's compute pacing).
struct nvmlProcessUtilizationSample_t {
  unsigned int pid;
  unsigned long long timeStamp;  // CPU time of the sample, microseconds
  unsigned int smUtil;           // percent of the sample period the process's kernels ran
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};

static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32, "NVML ABI on LP64");
static_assert(sizeof(nvmlMemory_t) == 24 && sizeof(nvmlUtilization_t) == 8, "NVML ABI");
static_assert(sizeof(nvmlPciInfo_t) == 68, "NVML ABI: 16 + 5 * 4 + 32 bytes");
static_assert(sizeof(nvmlEventData_t) == 32, "NVML ABI on LP64");

// nvmlGpuFabricInfo_t (NVML 12.2+, first version): where a GPU stands in a
// multi-node NVLink fabric (GB200 NVL72). GPUs with one cluster UUID and
// clique id reach each other over NVLink.
inline constexpr unsigned int NVML_GPU_FABRIC_UUID_LEN = 16;
using nvmlGpuFabricState_t = unsigned char;
inline constexpr nvmlGpuFabricState_t NVML_GPU_FABRIC_STATE_COMPLETED = 3;
struct nvmlGpuFabricInfo_t {
  unsigned char clusterUuid[NVML_GPU_FABRIC_UUID_LEN];
  nvmlReturn_t status;  // meaningful once state is COMPLETED
  unsigned int cliqueId;
  nvmlGpuFabricState_t state;
};
static_assert(sizeof(nvmlGpuFabricInfo_t) == 28, "NVML ABI: 16 + 4 + 4 + 1, padded to 4");

// MIG (Multi-Instance GPU): the mode, and what nvmlDeviceGetAttributes_v2
// says of a MIG device (it answers only for MIG device handles).
inline constexpr unsigned int NVML_DEVICE_MIG_ENABLE = 1;
struct nvmlDeviceAttributes_t {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;  // MiB
};
static_assert(sizeof(nvmlDeviceAttributes_t) == 40, "NVML ABI: 8 * 4 + 8");

// The functions, filled by dlsym. Required ones fail OpenNvml when missing;
// optional ones (marked) leave a feature out: NVLink topology, the NUMA node
// fallback, fabric domains, MIG devices, or fault events.
struct NvmlApi {
  nvmlReturn_t (*nvmlInit_v2)() = nullptr;
  nvmlReturn_t (*nvmlShutdown)() = nullptr;
  const char* (*nvmlErrorString)(nvmlReturn_t result) = nullptr;
  nvmlReturn_t (*nvmlSystemGetDriverVersion)(char* version, unsigned int length) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetCount_v2)(unsigned int* count) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetHandleByIndex_v2)(unsigned int index, nvmlDevice_t* device) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetUUID)(nvmlDevice_t device, char* uuid, unsigned int length) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetName)(nvmlDevice_t device, char* name, unsigned int length) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMemoryInfo)(nvmlDevice_t device, nvmlMemory_t* memory) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetPciInfo_v3)(nvmlDevice_t device, nvmlPciInfo_t* pci) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetUtilizationRates)(nvmlDevice_t device, nvmlUtilization_t* utilization) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetTemperature)(nvmlDevice_t device, nvmlTemperatureSensors_t sensor,
                                           unsigned int* celsius) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetPowerUsage)(nvmlDevice_t device, unsigned int* milliwatts) = nullptr;

  // Optional: NVLink topology.
  nvmlReturn_t (*nvmlDeviceGetNvLinkState)(nvmlDevice_t device, unsigned int link,
                                           nvmlEnableState_t* is_active) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetNvLinkRemotePciInfo_v2)(nvmlDevice_t device, unsigned int link,
                                                      nvmlPciInfo_t* pci) = nullptr;
  // Optional: only platforms whose GPUs are NUMA nodes answer (Grace Hopper).
  nvmlReturn_t (*nvmlDeviceGetNumaNodeId)(nvmlDevice_t device, unsigned int* node) = nullptr;
  // Optional: multi-node NVLink domains (drivers from 535 on, GPUs in an NVLink fabric).
  nvmlReturn_t (*nvmlDeviceGetGpuFabricInfo)(nvmlDevice_t device, nvmlGpuFabricInfo_t* info) = nullptr;
  // Optional: MIG devices (drivers from 450 on).
  nvmlReturn_t (*nvmlDeviceGetMigMode)(nvmlDevice_t device, unsigned int* current, unsigned int* pending) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMaxMigDeviceCount)(nvmlDevice_t device, unsigned int* count) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetMigDeviceHandleByIndex)(nvmlDevice_t device, unsigned int index, nvmlDevice_t* mig) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetAttributes_v2)(nvmlDevice_t device, nvmlDeviceAttributes_t* attributes) = nullptr;
  // Optional: fault events.
  nvmlReturn_t (*nvmlEventSetCreate)(nvmlEventSet_t* set) = nullptr;
  nvmlReturn_t (*nvmlEventSetFree)(nvmlEventSet_t set) = nullptr;
  nvmlReturn_t (*nvmlDeviceGetSupportedEventTypes)(nvmlDevice_t device, unsigned long long* types) = nullptr;
  nvmlReturn_t (*nvmlDeviceRegisterEvents)(nvmlDevice_t device, unsigned long long types, nvmlEventSet_t set) = nullptr;
  nvmlReturn_t (*nvmlEventSetWait_v2)(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeout_ms) = nullptr;
};

// NOLINTEND(readability-identifier-naming)

}  // namespace tessera::vgpu::nvml
