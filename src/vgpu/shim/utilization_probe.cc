#include "vgpu/shim/utilization_probe.h"

#include <dlfcn.h>

#include <algorithm>
#include <map>

#include "vgpu/nvml_api.h"
#include "vgpu/shim/driver_symbols.h"

namespace tessera::vgpu {

struct UtilizationProbe::Api {
  nvml::nvmlReturn_t (*init)() = nullptr;
  nvml::nvmlReturn_t (*handle_by_index)(unsigned int, nvml::nvmlDevice_t*) = nullptr;
  nvml::nvmlReturn_t (*process_utilization)(nvml::nvmlDevice_t, nvml::nvmlProcessUtilizationSample_t*, unsigned int*,
                                            unsigned long long) = nullptr;  // NOLINT(google-runtime-int)
};

UtilizationProbe::UtilizationProbe() = default;
UtilizationProbe::~UtilizationProbe() = default;

std::unique_ptr<UtilizationProbe> UtilizationProbe::Open(unsigned int nvml_index, std::string* why) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    *why = "libnvidia-ml.so.1 not found";
    return nullptr;
  }
  auto api = std::make_unique<Api>();
  api->init = reinterpret_cast<decltype(api->init)>(RealDlsym(lib, "nvmlInit_v2"));
  api->handle_by_index = reinterpret_cast<decltype(api->handle_by_index)>(RealDlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
  api->process_utilization =
      reinterpret_cast<decltype(api->process_utilization)>(RealDlsym(lib, "nvmlDeviceGetProcessUtilization"));
  if (!api->init || !api->handle_by_index || !api->process_utilization) {
    *why = "libnvidia-ml.so.1 lacks per-process utilization";
    return nullptr;
  }
  nvml::nvmlDevice_t device = nullptr;
  if (api->init() != nvml::NVML_SUCCESS || api->handle_by_index(nvml_index, &device) != nvml::NVML_SUCCESS) {
    *why = "NVML cannot open GPU " + std::to_string(nvml_index);
    return nullptr;
  }
  std::unique_ptr<UtilizationProbe> probe(new UtilizationProbe());
  probe->api_ = std::move(api);
  probe->device_ = device;
  return probe;
}

double UtilizationProbe::Sample(const std::vector<int>& pids) {
  nvml::nvmlProcessUtilizationSample_t samples[128];
  unsigned int count = 128;
  const auto rc = api_->process_utilization(static_cast<nvml::nvmlDevice_t>(device_), samples, &count, last_seen_us_);
  if (rc != nvml::NVML_SUCCESS || count == 0) return -1;
  // A process may have several samples in the window: average each, then add processes up.
  std::map<unsigned int, std::pair<double, int>> per_pid;
  for (unsigned int i = 0; i < count; ++i) {
    last_seen_us_ = std::max(last_seen_us_, samples[i].timeStamp);
    if (std::find(pids.begin(), pids.end(), static_cast<int>(samples[i].pid)) == pids.end()) continue;
    auto& [sum, n] = per_pid[samples[i].pid];
    sum += samples[i].smUtil;
    ++n;
  }
  double total = 0;
  for (const auto& [pid, sum_n] : per_pid) total += sum_n.first / sum_n.second;
  return total;
}

}  // namespace tessera::vgpu
