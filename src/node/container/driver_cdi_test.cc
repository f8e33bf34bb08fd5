#include "node/container/driver_cdi.h"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessera::node {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A node's driver files under a directory: one GPU of minor 3 at PCI
// 0000:17:00.0, its device nodes (links to /dev/null, so they are character
// devices 1:3), and libcuda and libnvidia-ml in the multiarch directory.
class DriverCdiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = testing::TempDir() + "tessera-driver-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    fs::create_directories(root_ + "/proc/driver/nvidia/gpus/0000:17:00.0");
    std::ofstream(root_ + "/proc/driver/nvidia/gpus/0000:17:00.0/information") << "Model: NVIDIA H100\nIRQ: 42\nDevice Minor: 3\n";
    fs::create_directories(root_ + "/dev");
    for (const char* node : {"nvidia3", "nvidiactl", "nvidia-uvm"}) fs::create_symlink("/dev/null", root_ + "/dev/" + node);
    const std::string lib = root_ + "/lib/x86_64-linux-gnu";
    fs::create_directories(lib);
    std::ofstream(lib + "/libcuda.so.550.54.15") << "cuda";
    fs::create_symlink("libcuda.so.550.54.15", lib + "/libcuda.so.1");
    std::ofstream(lib + "/libnvidia-ml.so.1") << "nvml";
    std::ofstream(lib + "/libz.so.1") << "zlib";
    gpu_.index = 0;
    gpu_.uuid = "GPU-0a1b";
    gpu_.pci_bus_id = "00000000:17:00.0";
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string root_;
  GpuInfo gpu_;
};

constexpr char kLdconfig[] = R"(4 libs found in cache `/etc/ld.so.cache'
	libz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1
	libnvidia-ml.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libnvidia-ml.so.1
	libcuda.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcuda.so.1
	libcuda.so.1 (libc6) => /lib/i386-linux-gnu/libcuda.so.1
	libcudart.so.12 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcudart.so.12
)";

TEST_F(DriverCdiTest, MakesTheGpusDevicesAndTheDriversLibraries) {
  Result<CdiSpec> spec = DriverCdiSpec({gpu_}, kLdconfig, root_);
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->kind, "nvidia.com/gpu");
  // The GPU by index and by UUID: its own device node, numbers from the node.
  for (const char* name : {"0", "GPU-0a1b"}) {
    ASSERT_TRUE(spec->devices.contains(name)) << name;
    const ContainerEdits& device = spec->devices.at(name);
    ASSERT_EQ(device.device_nodes.size(), 1u);
    EXPECT_EQ(device.device_nodes[0].path, "/dev/nvidia3");
    EXPECT_EQ(device.device_nodes[0].type, 'c');
    EXPECT_EQ(device.device_nodes[0].major, 1);
    EXPECT_EQ(device.device_nodes[0].minor, 3);
  }
  // Common to all: the control and UVM nodes there are; the compute
  // libraries, 64-bit, bound as the files their links name.
  std::vector<std::string> nodes;
  for (const DeviceNode& n : spec->edits.device_nodes) nodes.push_back(n.path);
  EXPECT_EQ(nodes, (std::vector<std::string>{"/dev/nvidiactl", "/dev/nvidia-uvm"}));
  ASSERT_EQ(spec->edits.mounts.size(), 2u);
  EXPECT_EQ(spec->edits.mounts[0].destination, "/lib/x86_64-linux-gnu/libnvidia-ml.so.1");
  EXPECT_EQ(spec->edits.mounts[1].destination, "/lib/x86_64-linux-gnu/libcuda.so.1");
  EXPECT_EQ(spec->edits.mounts[1].source, fs::canonical(root_ + "/lib/x86_64-linux-gnu/libcuda.so.550.54.15").string());
  EXPECT_TRUE(spec->edits.mounts[1].read_only);

  // Through the registry, as the agent asks: by UUID.
  CdiRegistry registry;
  registry.Add(*spec);
  Result<ContainerEdits> edits = registry.Device(kGpuKind, {"GPU-0a1b", "0"});
  ASSERT_TRUE(edits.ok()) << edits.status().message();
  EXPECT_EQ(edits->device_nodes.size(), 3u);
}

TEST_F(DriverCdiTest, SaysWhatIsMissing) {
  GpuInfo unknown = gpu_;
  unknown.pci_bus_id = "00000000:99:00.0";
  EXPECT_THAT(DriverCdiSpec({unknown}, kLdconfig, root_).status().message(),
              HasSubstr("GPU 0 (00000000:99:00.0): the driver names no device minor"));
  fs::remove(root_ + "/dev/nvidia3");
  EXPECT_THAT(DriverCdiSpec({gpu_}, kLdconfig, root_).status().message(), HasSubstr("GPU 0: no device node /dev/nvidia3"));
  fs::create_symlink("/dev/null", root_ + "/dev/nvidia3");
  EXPECT_THAT(DriverCdiSpec({gpu_}, "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1\n", root_).status().message(),
              HasSubstr("lists no libcuda.so"));
}

}  // namespace
}  // namespace tessera::node
