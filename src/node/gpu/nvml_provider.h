// The GpuProvider backed by NVML, and the pieces of it that tests can check
// without a GPU.
//
// Loading: dlopen(libnvidia-ml.so.1), then dlsym for every function nvml_api.h
// declares. A missing required function fails the open and names it (the
// driver is too old); a missing optional one drops its feature. Then
// nvmlInit_v2, the device count and one handle per GPU, kept until the
// provider dies (nvmlShutdown, dlclose).
//
// Where each GpuInfo field comes from:
//   uuid, name, memory_bytes, pci_bus_id  nvmlDeviceGetUUID / GetName /
//       GetMemoryInfo (total) / GetPciInfo_v3 (busId). If any of these fails,
//       or NVML gives no handle, the GPU is reported with healthy = false.
//   model          ShortModelName(name).
//   numa_node      /sys/bus/pci/devices/<address>/numa_node: the node of the
//       CPUs nearest the GPU, which is what pinning a task needs. Where sysfs
//       does not say, nvmlDeviceGetNumaNodeId (which answers only on platforms
//       whose GPUs are NUMA nodes themselves), else 0.
//   nvlink_peers   for each link with nvmlDeviceGetNvLinkState active, the PCI
//       address at its far end (nvmlDeviceGetNvLinkRemotePciInfo_v2); then
//       NvlinkPeers below. nvlink_domain follows (AssignNvlinkDomains).
// Sample: nvmlDeviceGetUtilizationRates (gpu), GetMemoryInfo (used),
// GetTemperature (GPU sensor), GetPowerUsage (milliwatts); a value NVML does
// not give is 0.
// PollFaults: an NVML event set registered, on each GPU, for the supported
// ones among Xid critical errors and single- and double-bit ECC errors, and
// drained with nvmlEventSetWait_v2 and a zero timeout.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "node/gpu/gpu_provider.h"

namespace tessera::node {

inline constexpr std::string_view kNvmlLibrary = "libnvidia-ml.so.1";

// OpenNvml() is OpenNvmlLibrary(kNvmlLibrary); tests name a library that does
// not exist to see the NotFound path on any machine.
Result<std::unique_ptr<GpuProvider>> OpenNvmlLibrary(const std::string& library);

// NVML's "00000000:17:00.0" as sysfs names the device: "0000:17:00.0" (the
// domain cut to four hex digits where it fits, lowercase).
std::string SysfsPciAddress(std::string_view nvml_bus_id);

// NVLink peers from link ends. bus_ids[i] is GPU i's address, link_ends[i] the
// addresses its active links lead to (both as SysfsPciAddress writes them; an
// empty bus id matches nothing). A link to another GPU here makes the two
// peers; a link to anything else (an NVSwitch, or a GPU this process cannot
// see) makes peers of all the GPUs that reach that same end. Returns each GPU's
// peers, ascending, without itself.
std::vector<std::vector<int>> NvlinkPeers(const std::vector<std::string>& bus_ids,
                                          const std::vector<std::vector<std::string>>& link_ends);

}  // namespace tessera::node
