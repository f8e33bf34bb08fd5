#include "node/gpu/nvml_provider.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <utility>

#include "vgpu/nvml_api.h"

namespace tessera::node {
namespace {

namespace nvml = vgpu::nvml;
using nvml::NVML_SUCCESS;
using nvml::nvmlDevice_t;
using nvml::nvmlReturn_t;

// A burst of events beyond this waits for the next poll, so that a GPU in an
// error storm cannot hold the agent's loop.
constexpr int kMaxEventsPerPoll = 256;

struct LibraryCloser {
  void operator()(void* library) const { dlclose(library); }
};
using Library = std::unique_ptr<void, LibraryCloser>;

template <typename F>
void Bind(void* library, const char* symbol, F*& function) {
  function = reinterpret_cast<F*>(dlsym(library, symbol));
}

Status Resolve(void* library, const std::string& name, nvml::NvmlApi& api) {
  std::string missing;
  const auto need = [&](const char* symbol, auto& function) {
    Bind(library, symbol, function);
    if (function == nullptr) missing += (missing.empty() ? "" : ", ") + std::string(symbol);
  };
  need("nvmlInit_v2", api.nvmlInit_v2);
  need("nvmlShutdown", api.nvmlShutdown);
  need("nvmlErrorString", api.nvmlErrorString);
  need("nvmlSystemGetDriverVersion", api.nvmlSystemGetDriverVersion);
  need("nvmlDeviceGetCount_v2", api.nvmlDeviceGetCount_v2);
  need("nvmlDeviceGetHandleByIndex_v2", api.nvmlDeviceGetHandleByIndex_v2);
  need("nvmlDeviceGetUUID", api.nvmlDeviceGetUUID);
  need("nvmlDeviceGetName", api.nvmlDeviceGetName);
  need("nvmlDeviceGetMemoryInfo", api.nvmlDeviceGetMemoryInfo);
  need("nvmlDeviceGetPciInfo_v3", api.nvmlDeviceGetPciInfo_v3);
  need("nvmlDeviceGetUtilizationRates", api.nvmlDeviceGetUtilizationRates);
  need("nvmlDeviceGetTemperature", api.nvmlDeviceGetTemperature);
  need("nvmlDeviceGetPowerUsage", api.nvmlDeviceGetPowerUsage);
  if (!missing.empty()) {
    return {StatusCode::kFailedPrecondition,
            name + " does not export " + missing + ": the NVIDIA driver is too old for Tessera; update it"};
  }
  Bind(library, "nvmlDeviceGetNvLinkState", api.nvmlDeviceGetNvLinkState);
  Bind(library, "nvmlDeviceGetNvLinkRemotePciInfo_v2", api.nvmlDeviceGetNvLinkRemotePciInfo_v2);
  Bind(library, "nvmlDeviceGetNumaNodeId", api.nvmlDeviceGetNumaNodeId);
  Bind(library, "nvmlDeviceGetGpuFabricInfo", api.nvmlDeviceGetGpuFabricInfo);
  Bind(library, "nvmlDeviceGetMigMode", api.nvmlDeviceGetMigMode);
  Bind(library, "nvmlDeviceGetMaxMigDeviceCount", api.nvmlDeviceGetMaxMigDeviceCount);
  Bind(library, "nvmlDeviceGetMigDeviceHandleByIndex", api.nvmlDeviceGetMigDeviceHandleByIndex);
  Bind(library, "nvmlDeviceGetAttributes_v2", api.nvmlDeviceGetAttributes_v2);
  Bind(library, "nvmlEventSetCreate", api.nvmlEventSetCreate);
  Bind(library, "nvmlEventSetFree", api.nvmlEventSetFree);
  Bind(library, "nvmlDeviceGetSupportedEventTypes", api.nvmlDeviceGetSupportedEventTypes);
  Bind(library, "nvmlDeviceRegisterEvents", api.nvmlDeviceRegisterEvents);
  Bind(library, "nvmlEventSetWait_v2", api.nvmlEventSetWait_v2);
  return Status::Ok();
}

// NVML's strings are NUL-terminated within their buffers; this stays inside
// the buffer even if one is not.
template <std::size_t N>
std::string Text(const char (&buffer)[N]) {
  return std::string(buffer, strnlen(buffer, N));
}

class NvmlProvider final : public GpuProvider {
 public:
  NvmlProvider(Library library, const nvml::NvmlApi& api) : library_(std::move(library)), api_(api) {}
  // Constructed only after nvmlInit_v2 succeeded, so the shutdown pairs with it.
  ~NvmlProvider() override {
    if (events_ != nullptr) api_.nvmlEventSetFree(events_);
    api_.nvmlShutdown();
  }
  NvmlProvider(const NvmlProvider&) = delete;
  NvmlProvider& operator=(const NvmlProvider&) = delete;

  Status Start();
  std::string Describe() const override;
  bool fake() const override { return false; }
  Result<std::vector<GpuInfo>> Discover() override;
  Result<std::vector<GpuSample>> Sample() override;
  std::vector<GpuFault> PollFaults() override;
  Status CheckHealth(int index) override;

 private:
  std::string Why(nvmlReturn_t result) const {
    const char* text = api_.nvmlErrorString(result);
    return text != nullptr ? text : "NVML error " + std::to_string(result);
  }
  void WatchFaults();
  int NumaNode(nvmlDevice_t device, const std::string& address) const;
  std::vector<std::string> NvlinkEnds(nvmlDevice_t device) const;
  std::string FabricDomainOf(nvmlDevice_t device) const;
  std::vector<MigDeviceInfo> MigDevicesOf(nvmlDevice_t device, std::int64_t memory_bytes) const;

  Library library_;
  nvml::NvmlApi api_;
  std::string driver_version_;
  std::vector<nvmlDevice_t> devices_;      // by index; null where NVML gave no handle
  nvml::nvmlEventSet_t events_ = nullptr;  // null: no fault events
  int watched_ = 0;                        // GPUs registered in events_
};

Status NvmlProvider::Start() {
  char version[nvml::NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  if (api_.nvmlSystemGetDriverVersion(version, sizeof version) == NVML_SUCCESS) driver_version_ = Text(version);
  unsigned int count = 0;
  if (const nvmlReturn_t result = api_.nvmlDeviceGetCount_v2(&count); result != NVML_SUCCESS) {
    return {StatusCode::kFailedPrecondition, "nvmlDeviceGetCount_v2 failed: " + Why(result)};
  }
  devices_.assign(count, nullptr);
  for (unsigned int i = 0; i < count; ++i) {
    if (api_.nvmlDeviceGetHandleByIndex_v2(i, &devices_[i]) != NVML_SUCCESS) devices_[i] = nullptr;
  }
  WatchFaults();
  return Status::Ok();
}

void NvmlProvider::WatchFaults() {
  if (api_.nvmlEventSetCreate == nullptr || api_.nvmlEventSetFree == nullptr ||
      api_.nvmlDeviceGetSupportedEventTypes == nullptr || api_.nvmlDeviceRegisterEvents == nullptr ||
      api_.nvmlEventSetWait_v2 == nullptr) {
    return;
  }
  if (api_.nvmlEventSetCreate(&events_) != NVML_SUCCESS) {
    events_ = nullptr;
    return;
  }
  constexpr unsigned long long kWanted =
      nvml::nvmlEventTypeXidCriticalError | nvml::nvmlEventTypeDoubleBitEccError | nvml::nvmlEventTypeSingleBitEccError;
  for (nvmlDevice_t device : devices_) {
    unsigned long long types = 0;
    if (device == nullptr || api_.nvmlDeviceGetSupportedEventTypes(device, &types) != NVML_SUCCESS) continue;
    types &= kWanted;
    if (types != 0 && api_.nvmlDeviceRegisterEvents(device, types, events_) == NVML_SUCCESS) ++watched_;
  }
}

std::string NvmlProvider::Describe() const {
  const int count = static_cast<int>(devices_.size());
  std::string text = "NVML, driver " + (driver_version_.empty() ? "unknown" : driver_version_) + ", " +
                     std::to_string(count) + (count == 1 ? " GPU" : " GPUs");
  if (watched_ < count) text += " (fault events from " + std::to_string(watched_) + ")";
  return text;
}

int NvmlProvider::NumaNode(nvmlDevice_t device, const std::string& address) const {
  if (!address.empty()) {
    std::ifstream in("/sys/bus/pci/devices/" + address + "/numa_node");
    int node = -1;  // what sysfs says on machines with one node
    if (in >> node && node >= 0) return node;
  }
  unsigned int node = 0;
  if (api_.nvmlDeviceGetNumaNodeId != nullptr && api_.nvmlDeviceGetNumaNodeId(device, &node) == NVML_SUCCESS) {
    return static_cast<int>(node);
  }
  return 0;
}

std::vector<std::string> NvmlProvider::NvlinkEnds(nvmlDevice_t device) const {
  std::vector<std::string> ends;
  if (api_.nvmlDeviceGetNvLinkState == nullptr || api_.nvmlDeviceGetNvLinkRemotePciInfo_v2 == nullptr) return ends;
  // Links past a GPU's own count answer an error, like inactive ones.
  for (unsigned int link = 0; link < nvml::NVML_NVLINK_MAX_LINKS; ++link) {
    nvml::nvmlEnableState_t active = 0;
    if (api_.nvmlDeviceGetNvLinkState(device, link, &active) != NVML_SUCCESS || active != nvml::NVML_FEATURE_ENABLED) {
      continue;
    }
    nvml::nvmlPciInfo_t remote{};
    if (api_.nvmlDeviceGetNvLinkRemotePciInfo_v2(device, link, &remote) == NVML_SUCCESS) {
      ends.push_back(SysfsPciAddress(Text(remote.busId)));
    }
  }
  return ends;
}

// Empty where the GPU is in no NVLink fabric, its registration with the
// fabric manager is not complete, or the driver cannot tell.
std::string NvmlProvider::FabricDomainOf(nvmlDevice_t device) const {
  if (api_.nvmlDeviceGetGpuFabricInfo == nullptr) return "";
  nvml::nvmlGpuFabricInfo_t info{};
  if (api_.nvmlDeviceGetGpuFabricInfo(device, &info) != NVML_SUCCESS || info.state != nvml::NVML_GPU_FABRIC_STATE_COMPLETED ||
      info.status != NVML_SUCCESS) {
    return "";
  }
  return FabricDomain(std::span(info.clusterUuid), info.cliqueId);
}

// Empty where the GPU is not in MIG mode or the driver has no MIG calls. A
// device NVML cannot describe is left out: the scheduler never sees it.
std::vector<MigDeviceInfo> NvmlProvider::MigDevicesOf(nvmlDevice_t device, std::int64_t memory_bytes) const {
  if (api_.nvmlDeviceGetMigMode == nullptr || api_.nvmlDeviceGetMaxMigDeviceCount == nullptr ||
      api_.nvmlDeviceGetMigDeviceHandleByIndex == nullptr || api_.nvmlDeviceGetAttributes_v2 == nullptr) {
    return {};
  }
  unsigned int current = 0, pending = 0, most = 0;
  if (api_.nvmlDeviceGetMigMode(device, &current, &pending) != NVML_SUCCESS || current != nvml::NVML_DEVICE_MIG_ENABLE ||
      api_.nvmlDeviceGetMaxMigDeviceCount(device, &most) != NVML_SUCCESS) {
    return {};
  }
  std::vector<MigDeviceInfo> devices;
  for (unsigned int i = 0; i < most; ++i) {
    nvmlDevice_t mig = nullptr;
    if (api_.nvmlDeviceGetMigDeviceHandleByIndex(device, i, &mig) != NVML_SUCCESS) continue;  // NOT_FOUND: no device there
    char uuid[nvml::NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    nvml::nvmlDeviceAttributes_t attributes{};
    if (api_.nvmlDeviceGetUUID(mig, uuid, sizeof uuid) != NVML_SUCCESS ||
        api_.nvmlDeviceGetAttributes_v2(mig, &attributes) != NVML_SUCCESS) {
      continue;
    }
    devices.push_back({MigProfileName(static_cast<int>(attributes.computeInstanceSliceCount), static_cast<int>(attributes.gpuInstanceSliceCount),
                                      static_cast<std::int64_t>(attributes.memorySizeMB) << 20, memory_bytes),
                       Text(uuid)});
  }
  return devices;
}

Result<std::vector<GpuInfo>> NvmlProvider::Discover() {
  const std::size_t count = devices_.size();
  std::vector<GpuInfo> gpus(count);
  std::vector<std::string> addresses(count);
  std::vector<std::vector<std::string>> link_ends(count);
  for (std::size_t i = 0; i < count; ++i) {
    GpuInfo& gpu = gpus[i];
    gpu.index = static_cast<int>(i);
    const nvmlDevice_t device = devices_[i];
    if (device == nullptr) {
      gpu.healthy = false;
      continue;
    }
    char uuid[nvml::NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
    char name[nvml::NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {};
    nvml::nvmlMemory_t memory{};
    nvml::nvmlPciInfo_t pci{};
    gpu.healthy = api_.nvmlDeviceGetUUID(device, uuid, sizeof uuid) == NVML_SUCCESS &&
                  api_.nvmlDeviceGetName(device, name, sizeof name) == NVML_SUCCESS &&
                  api_.nvmlDeviceGetMemoryInfo(device, &memory) == NVML_SUCCESS &&
                  api_.nvmlDeviceGetPciInfo_v3(device, &pci) == NVML_SUCCESS;
    if (!gpu.healthy) continue;
    gpu.uuid = Text(uuid);
    gpu.name = Text(name);
    gpu.model = ShortModelName(gpu.name);
    gpu.memory_bytes = static_cast<std::int64_t>(memory.total);
    gpu.pci_bus_id = Text(pci.busId);
    addresses[i] = SysfsPciAddress(gpu.pci_bus_id);
    gpu.numa_node = NumaNode(device, addresses[i]);
    link_ends[i] = NvlinkEnds(device);
    gpu.fabric_domain = FabricDomainOf(device);
    gpu.mig = MigDevicesOf(device, gpu.memory_bytes);
  }
  std::vector<std::vector<int>> peers = NvlinkPeers(addresses, link_ends);
  for (std::size_t i = 0; i < count; ++i) gpus[i].nvlink_peers = std::move(peers[i]);
  AssignNvlinkDomains(gpus);
  return gpus;
}

Status NvmlProvider::CheckHealth(int index) {
  // A fresh handle and a memory query: what fails on a GPU that is lost or
  // wedged (NVML_ERROR_GPU_IS_LOST, NVML_ERROR_UNKNOWN) after a reset-class fault.
  nvmlDevice_t device = nullptr;
  if (const nvmlReturn_t r = api_.nvmlDeviceGetHandleByIndex_v2(static_cast<unsigned>(index), &device); r != NVML_SUCCESS) {
    return Status(StatusCode::kFailedPrecondition, "GPU " + std::to_string(index) + ": " + Why(r));
  }
  nvml::nvmlMemory_t memory{};
  if (const nvmlReturn_t r = api_.nvmlDeviceGetMemoryInfo(device, &memory); r != NVML_SUCCESS) {
    return Status(StatusCode::kFailedPrecondition, "GPU " + std::to_string(index) + ": " + Why(r));
  }
  if (static_cast<std::size_t>(index) < devices_.size()) devices_[static_cast<std::size_t>(index)] = device;
  return Status::Ok();
}

Result<std::vector<GpuSample>> NvmlProvider::Sample() {
  std::vector<GpuSample> samples(devices_.size());
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    GpuSample& sample = samples[i];
    sample.index = static_cast<int>(i);
    const nvmlDevice_t device = devices_[i];
    if (device == nullptr) continue;
    nvml::nvmlUtilization_t utilization{};
    if (api_.nvmlDeviceGetUtilizationRates(device, &utilization) == NVML_SUCCESS) {
      sample.utilization_percent = utilization.gpu;
    }
    nvml::nvmlMemory_t memory{};
    if (api_.nvmlDeviceGetMemoryInfo(device, &memory) == NVML_SUCCESS) {
      sample.memory_used_bytes = static_cast<std::int64_t>(memory.used);
    }
    unsigned int celsius = 0;
    if (api_.nvmlDeviceGetTemperature(device, nvml::NVML_TEMPERATURE_GPU, &celsius) == NVML_SUCCESS) {
      sample.temperature_c = celsius;
    }
    unsigned int milliwatts = 0;
    if (api_.nvmlDeviceGetPowerUsage(device, &milliwatts) == NVML_SUCCESS) sample.power_watts = milliwatts / 1000.0;
  }
  return samples;
}

std::vector<GpuFault> NvmlProvider::PollFaults() {
  std::vector<GpuFault> faults;
  if (events_ == nullptr) return faults;
  for (int n = 0; n < kMaxEventsPerPoll; ++n) {
    nvml::nvmlEventData_t event{};
    // NVML_ERROR_TIMEOUT once nothing is waiting.
    if (api_.nvmlEventSetWait_v2(events_, &event, 0) != NVML_SUCCESS) break;
    const auto device = std::find(devices_.begin(), devices_.end(), event.device);
    if (device == devices_.end()) continue;  // only our handles are registered; kept safe regardless
    GpuFault fault;
    fault.index = static_cast<int>(device - devices_.begin());
    if ((event.eventType & nvml::nvmlEventTypeXidCriticalError) != 0) {
      fault.kind = GpuFaultKind::kXid;
      fault.code = static_cast<std::int64_t>(event.eventData);
    } else if ((event.eventType & nvml::nvmlEventTypeDoubleBitEccError) != 0) {
      fault.kind = GpuFaultKind::kEccDoubleBit;
    } else if ((event.eventType & nvml::nvmlEventTypeSingleBitEccError) != 0) {
      fault.kind = GpuFaultKind::kEccSingleBit;
    } else {
      continue;
    }
    fault.detail = FaultDetail(fault.kind, fault.code);
    faults.push_back(std::move(fault));
  }
  return faults;
}

}  // namespace

Result<std::unique_ptr<GpuProvider>> OpenNvmlLibrary(const std::string& library) {
  dlerror();  // clear any earlier error, so the one read below is ours
  Library handle(dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (handle == nullptr) {
    const char* why = dlerror();
    return NotFound("NVML is not available: cannot load " + library + " (" + (why != nullptr ? why : "unknown error") +
                    "); this machine has no NVIDIA driver, or its libraries are not on the loader's path");
  }
  nvml::NvmlApi api;
  TESSERA_RETURN_IF_ERROR(Resolve(handle.get(), library, api));
  if (const nvmlReturn_t result = api.nvmlInit_v2(); result != NVML_SUCCESS) {
    const char* why = api.nvmlErrorString(result);
    const std::string what = "nvmlInit_v2 failed: " + std::string(why != nullptr ? why : "unknown error");
    if (result == nvml::NVML_ERROR_DRIVER_NOT_LOADED) {
      return NotFound(library + " is installed but the NVIDIA kernel driver is not loaded (" + what + ")");
    }
    return Status(StatusCode::kFailedPrecondition, library + ": " + what);
  }
  auto provider = std::make_unique<NvmlProvider>(std::move(handle), api);
  TESSERA_RETURN_IF_ERROR(provider->Start());
  return std::unique_ptr<GpuProvider>(std::move(provider));
}

Result<std::unique_ptr<GpuProvider>> OpenNvml() { return OpenNvmlLibrary(std::string(kNvmlLibrary)); }

std::string SysfsPciAddress(std::string_view nvml_bus_id) {
  std::string address(nvml_bus_id);
  for (char& c : address) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::size_t colon = address.find(':');
  // A domain of more than four digits keeps its significant ones ("10000:").
  std::size_t zeros = 0;
  while (colon != std::string::npos && colon - zeros > 4 && address[zeros] == '0') ++zeros;
  return address.substr(zeros);
}

std::vector<std::vector<int>> NvlinkPeers(const std::vector<std::string>& bus_ids,
                                          const std::vector<std::vector<std::string>>& link_ends) {
  const int count = static_cast<int>(bus_ids.size());
  std::map<std::string, int> gpu_at;
  for (int i = 0; i < count; ++i) {
    if (!bus_ids[i].empty()) gpu_at[bus_ids[i]] = i;
  }
  std::vector<std::set<int>> peers(bus_ids.size());
  std::map<std::string, std::vector<int>> reaching;  // a non-GPU end -> the GPUs linked to it
  for (int i = 0; i < count && i < static_cast<int>(link_ends.size()); ++i) {
    for (const std::string& end : link_ends[i]) {
      if (end.empty()) continue;
      if (const auto gpu = gpu_at.find(end); gpu != gpu_at.end()) {
        if (gpu->second == i) continue;
        peers[i].insert(gpu->second);
        peers[gpu->second].insert(i);
      } else {
        reaching[end].push_back(i);
      }
    }
  }
  for (const auto& [end, gpus] : reaching) {
    for (int a : gpus) {
      for (int b : gpus) {
        if (a != b) peers[a].insert(b);
      }
    }
  }
  std::vector<std::vector<int>> result;
  for (const std::set<int>& set : peers) result.emplace_back(set.begin(), set.end());
  return result;
}

}  // namespace tessera::node
