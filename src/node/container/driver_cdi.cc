#include "node/container/driver_cdi.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

namespace tessera::node {

namespace {

namespace fs = std::filesystem;

// "00000000:17:00.0" (NVML) -> "0000:17:00.0" (the driver's /proc directory), lower case.
std::string ProcBusId(const std::string& nvml_bus_id) {
  std::string id = nvml_bus_id;
  const std::size_t colon = id.find(':');
  if (colon != std::string::npos && colon > 4) id = id.substr(colon - 4);
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return id;
}

std::optional<int> DeviceMinor(const std::string& root, const GpuInfo& gpu) {
  std::ifstream in(root + "/proc/driver/nvidia/gpus/" + ProcBusId(gpu.pci_bus_id) + "/information");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("Device Minor:")) continue;
    try {
      return std::stoi(line.substr(13));
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// The node's device node at `path`, with its numbers; nullopt when absent.
std::optional<DeviceNode> HostDevice(const std::string& root, const std::string& path) {
  struct stat st {};
  if (stat((root + path).c_str(), &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) return std::nullopt;
  return DeviceNode{path, S_ISCHR(st.st_mode) ? 'c' : 'b', major(st.st_rdev), minor(st.st_rdev), 0666};
}

bool IsDriverLibrary(std::string_view name) {
  return std::any_of(std::begin(kDriverLibraries), std::end(kDriverLibraries),
                     [&](std::string_view lib) { return name.starts_with(lib) && (name.size() == lib.size() || name[lib.size()] == '.'); });
}

}  // namespace

Result<CdiSpec> DriverCdiSpec(const std::vector<GpuInfo>& gpus, std::string_view ldconfig_output, const std::string& root) {
  CdiSpec spec;
  spec.source = "made by the agent from the driver's files (no CDI spec on this node)";
  spec.kind = std::string(kGpuKind);
  for (const GpuInfo& gpu : gpus) {
    const std::optional<int> minor = DeviceMinor(root, gpu);
    if (!minor) return NotFound("GPU " + std::to_string(gpu.index) + " (" + gpu.pci_bus_id + "): the driver names no device minor in /proc/driver/nvidia/gpus");
    const std::string path = "/dev/nvidia" + std::to_string(*minor);
    std::optional<DeviceNode> node = HostDevice(root, path);
    if (!node) return NotFound("GPU " + std::to_string(gpu.index) + ": no device node " + path);
    ContainerEdits device;
    device.device_nodes.push_back(*node);
    spec.devices[std::to_string(gpu.index)] = device;
    spec.devices[gpu.uuid] = device;
  }
  for (const char* path : {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}) {
    if (std::optional<DeviceNode> node = HostDevice(root, path)) spec.edits.device_nodes.push_back(*node);
  }
  // "\tlibcuda.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcuda.so.1"
  std::istringstream lines{std::string(ldconfig_output)};
  std::string line;
  bool has_cuda = false;
  while (std::getline(lines, line)) {
    const std::size_t arrow = line.find(" => ");
    const std::size_t open = line.find(" (");
    if (arrow == std::string::npos || open == std::string::npos || line.find("x86-64", open) > arrow) continue;
    std::string name = line.substr(0, open);
    name.erase(0, name.find_first_not_of(" \t"));
    const std::string path = line.substr(arrow + 4);
    if (!IsDriverLibrary(name)) continue;
    std::error_code ec;
    const fs::path file = fs::canonical(root + path, ec);
    if (ec) continue;  // a stale cache entry
    spec.edits.mounts.push_back({file.string(), path, true});
    has_cuda = has_cuda || name.starts_with("libcuda.so");
  }
  if (!has_cuda) return NotFound("the linker cache (ldconfig -p) lists no libcuda.so: is the NVIDIA driver installed?");
  for (const char* binary : {"/usr/bin/nvidia-smi", "/usr/bin/nvidia-debugdump"}) {
    std::error_code ec;
    if (fs::exists(root + binary, ec)) spec.edits.mounts.push_back({root + binary, binary, true});
  }
  return spec;
}

}  // namespace tessera::node
