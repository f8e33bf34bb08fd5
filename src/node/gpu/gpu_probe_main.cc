// tessera-gpu-probe: prints what the agent's GPU discovery sees, as JSON, so
// that it can be checked against nvidia-smi (scripts/gpu/check-nvml.sh) before
// `tessera agent` exists.
//
//   tessera-gpu-probe              NVML; exit 1 when it is absent or unusable
//   tessera-gpu-probe --fake FILE  the fake GPUs FILE describes; exit 2 when unreadable
//
// Output: {"provider", "fake", "gpus": [GpuInfo...], "samples": [GpuSample...],
// "faults": [...]}, pretty-printed with one field per line (the script greps it).
#include <nlohmann/json.hpp>

#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include "base/quantity.h"
#include "node/gpu/gpu_provider.h"

namespace {

using Json = nlohmann::ordered_json;  // fields in the order written here
using tessera::node::GpuProvider;

Json GpusJson(const std::vector<tessera::node::GpuInfo>& gpus) {
  Json list = Json::array();
  for (const auto& gpu : gpus) {
    // Named apart from the GPU's own "uuid": scripts/gpu/check-nvml.sh greps fields by name.
    Json mig = Json::array();
    for (const auto& device : gpu.mig) mig.push_back({{"migProfile", device.profile}, {"migUuid", device.uuid}});
    list.push_back({{"index", gpu.index},
                    {"uuid", gpu.uuid},
                    {"model", gpu.model},
                    {"name", gpu.name},
                    {"memoryBytes", gpu.memory_bytes},
                    {"memory", tessera::FormatBytes(gpu.memory_bytes)},
                    {"pciBusId", gpu.pci_bus_id},
                    {"numaNode", gpu.numa_node},
                    {"nvlinkDomain", gpu.nvlink_domain},
                    {"nvlinkPeers", gpu.nvlink_peers},
                    {"fabricDomain", gpu.fabric_domain},
                    {"migDevices", mig},
                    {"healthy", gpu.healthy}});
  }
  return list;
}

Json SamplesJson(const std::vector<tessera::node::GpuSample>& samples) {
  Json list = Json::array();
  for (const auto& sample : samples) {
    list.push_back({{"index", sample.index},
                    {"utilizationPercent", sample.utilization_percent},
                    {"memoryUsedBytes", sample.memory_used_bytes},
                    {"temperatureC", sample.temperature_c},
                    {"powerWatts", sample.power_watts}});
  }
  return list;
}

Json FaultsJson(const std::vector<tessera::node::GpuFault>& faults) {
  Json list = Json::array();
  for (const auto& fault : faults) {
    list.push_back({{"index", fault.index},
                    {"kind", tessera::node::FaultKindName(fault.kind)},
                    {"code", fault.code},
                    {"detail", fault.detail}});
  }
  return list;
}

}  // namespace

int main(int argc, char** argv) {
  constexpr int kExitNoNvml = 1;
  constexpr int kExitBadInput = 2;
  const bool fake = argc == 3 && std::strcmp(argv[1], "--fake") == 0;
  if (argc != 1 && !fake) {
    std::cerr << "usage: tessera-gpu-probe [--fake FILE]\n";
    return kExitBadInput;
  }
  tessera::Result<std::unique_ptr<GpuProvider>> provider =
      fake ? tessera::node::LoadFakeGpus(argv[2]) : tessera::node::OpenNvml();
  if (!provider.ok()) {
    std::cerr << "tessera-gpu-probe: " << provider.status().message() << '\n';
    return fake ? kExitBadInput : kExitNoNvml;
  }
  GpuProvider& gpus = **provider;
  auto discovered = gpus.Discover();
  auto samples = gpus.Sample();
  if (!discovered.ok() || !samples.ok()) {
    std::cerr << "tessera-gpu-probe: " << (discovered.ok() ? samples.status() : discovered.status()).message() << '\n';
    return kExitNoNvml;
  }
  const Json out = {{"provider", gpus.Describe()},
                    {"fake", gpus.fake()},
                    {"gpus", GpusJson(*discovered)},
                    {"samples", SamplesJson(*samples)},
                    {"faults", FaultsJson(gpus.PollFaults())}};
  std::cout << out.dump(2) << '\n';
  return 0;
}
