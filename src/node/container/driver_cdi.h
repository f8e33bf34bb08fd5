// A CDI spec for a GPU node that has none (nvidia-ctk never ran): the
// minimal edits made from what the driver put on the node, so that GPU
// containers still run there.
//
//   each GPU   a device named by its index and by its UUID: /dev/nvidia<minor>,
//              the minor read from /proc/driver/nvidia/gpus/<PCI bus id>/information
//              ("Device Minor:"), where the driver says it
//   all GPUs   /dev/nvidiactl, /dev/nvidia-uvm and /dev/nvidia-uvm-tools (those
//              present), and the driver's user-space compute libraries as the
//              linker cache lists them (`ldconfig -p`, 64-bit only), bound
//              read-only at the paths listed (a SONAME link bound as the file
//              it names), and nvidia-smi where it is
//
// Unlike nvidia-ctk's spec there is no hook that refreshes the container's
// linker cache: the libraries sit at the node's paths, which the dynamic
// linker of a Debian- or Ubuntu-based image (every CUDA image) searches by
// default. Other images need the nvidia-ctk spec. MIG devices are not
// made here: their capability device nodes come from nvidia-ctk too.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "node/container/cdi.h"
#include "node/gpu/gpu_provider.h"

namespace tessera::node {

// The driver's libraries a compute container needs (nvidia-ctk's compute set).
inline constexpr std::string_view kDriverLibraries[] = {
    "libcuda.so",         "libcudadebugger.so", "libnvidia-ml.so",    "libnvidia-ptxjitcompiler.so", "libnvidia-nvvm.so",
    "libnvidia-gpucomp.so", "libnvidia-allocator.so", "libnvidia-cfg.so", "libnvidia-opencl.so"};

// `root` prefixes every node path read (/proc, /dev, /usr/bin; the libraries'
// paths): "" on a node, a directory in tests. Fails when a GPU's device node
// cannot be found, or when the linker cache lists no libcuda.
Result<CdiSpec> DriverCdiSpec(const std::vector<GpuInfo>& gpus, std::string_view ldconfig_output, const std::string& root = "");

}  // namespace tessera::node
