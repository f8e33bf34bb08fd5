#include "node/container/cdi.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace tessera::node {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// The shape `nvidia-ctk cdi generate` writes (trimmed): spec-wide driver
// edits, and each GPU by index and by UUID.
constexpr char kNvidiaSpec[] = R"(---
cdiVersion: 0.5.0
kind: nvidia.com/gpu
containerEdits:
  env:
    - NVIDIA_VISIBLE_DEVICES=void
  deviceNodes:
    - {path: /dev/nvidiactl, type: c, major: 195, minor: 255}
  mounts:
    - hostPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15
      containerPath: /usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15
      options: [ro, nosuid, nodev, bind]
  hooks:
    - hookName: createContainer
      path: /usr/bin/nvidia-ctk
      args: [nvidia-ctk, hook, update-ldcache, --folder, /usr/lib/x86_64-linux-gnu]
devices:
  - name: "0"
    containerEdits:
      deviceNodes: [{path: /dev/nvidia0, type: c, major: 195, minor: 0}]
  - name: GPU-4f1c
    containerEdits:
      deviceNodes: [{path: /dev/nvidia0, type: c, major: 195, minor: 0}]
  - name: "1"
    containerEdits:
      deviceNodes: [{path: /dev/nvidia1, type: c, major: 195, minor: 1}]
)";

TEST(CdiTest, ReadsAnNvidiaCtkSpec) {
  Result<CdiSpec> spec = ParseCdiSpec(kNvidiaSpec, "/etc/cdi/nvidia.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->kind, "nvidia.com/gpu");
  EXPECT_EQ(spec->devices.size(), 3u);
  ASSERT_EQ(spec->edits.mounts.size(), 1u);
  EXPECT_TRUE(spec->edits.mounts[0].read_only);
  ASSERT_EQ(spec->edits.hooks.size(), 1u);
  EXPECT_EQ(spec->edits.hooks[0].stage, "createContainer");
  EXPECT_EQ(spec->edits.hooks[0].args.back(), "/usr/lib/x86_64-linux-gnu");

  CdiRegistry registry;
  registry.Add(*spec);
  // By UUID first, then by index: either naming strategy of nvidia-ctk works.
  Result<ContainerEdits> gpu0 = registry.Device(kGpuKind, {"GPU-4f1c", "0"});
  ASSERT_TRUE(gpu0.ok()) << gpu0.status().message();
  ASSERT_EQ(gpu0->device_nodes.size(), 2u);  // the spec's /dev/nvidiactl, then the device's own
  EXPECT_EQ(gpu0->device_nodes[1].path, "/dev/nvidia0");
  EXPECT_EQ(gpu0->device_nodes[1].major, 195);
  EXPECT_EQ(gpu0->env, std::vector<std::string>{"NVIDIA_VISIBLE_DEVICES=void"});
  Result<ContainerEdits> gpu1 = registry.Device(kGpuKind, {"GPU-other", "1"});
  ASSERT_TRUE(gpu1.ok());
  EXPECT_EQ(gpu1->device_nodes[1].minor, 1);
  Result<ContainerEdits> missing = registry.Device(kGpuKind, {"GPU-gone", "7"});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("no CDI spec names nvidia.com/gpu=GPU-gone"));
  EXPECT_THAT(missing.status().message(), HasSubstr("nvidia-ctk cdi generate"));
  registry.Add(*spec);
  Result<ContainerEdits> twice = registry.Device(kGpuKind, {"0"});
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.status().message(), HasSubstr("is in two specs"));
}

TEST(CdiTest, ADeviceNodeWithoutNumbersTakesTheHosts) {
  Result<CdiSpec> spec = ParseCdiSpec(R"({"cdiVersion":"0.6.0","kind":"example.com/null",
      "devices":[{"name":"n","containerEdits":{"deviceNodes":[{"path":"/dev/fake0","hostPath":"/dev/null"}]}}]})", "null.json");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  const DeviceNode& node = spec->devices.at("n").device_nodes.at(0);
  EXPECT_EQ(node.type, 'c');
  EXPECT_EQ(node.major, 1);
  EXPECT_EQ(node.minor, 3);
}

TEST(CdiTest, BadSpecsSayWhatIsWrongAndWhere) {
  const std::pair<const char*, const char*> cases[] = {
      {"cdiVersion: 0.5.0\nkind: nvidia\ndevices: []\n", "s.yaml: kind: 'nvidia' is not VENDOR/CLASS"},
      {"kind: a/b\ndevices: []\n", "s.yaml.cdiVersion: required"},
      {"cdiVersion: 0.5.0\nkind: a/b\n", "s.yaml: devices: required, a list"},
      {"cdiVersion: 0.5.0\nkind: a/b\ndevices: [{name: x, containerEdits: {hooks: [{hookName: later, path: /bin/true}]}}]\n",
       "s.yaml: devices[0].containerEdits.hooks[0].hookName: 'later' is not an OCI hook stage"},
      {"cdiVersion: 0.5.0\nkind: a/b\ndevices: [{name: x, containerEdits: {deviceNodes: [{path: /dev/nope-not-here}]}}]\n",
       "/dev/nope-not-here is not a device node on this machine"},
      {"cdiVersion: 0.5.0\nkind: a/b\ndevices: [{name: x}, {name: x}]\n", "devices[1].name: device 'x' is named twice"},
      {"{cdiVersion: [", "s.yaml: "},
  };
  for (const auto& [text, expected] : cases) {
    Result<CdiSpec> spec = ParseCdiSpec(text, "s.yaml");
    ASSERT_FALSE(spec.ok()) << text;
    EXPECT_THAT(spec.status().message(), HasSubstr(expected)) << text;
  }
}

TEST(CdiTest, LoadSkipsWhatIsNotASpecAndSaysWhy) {
  const fs::path dir = fs::temp_directory_path() / ("cdi-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "nvidia.yaml") << kNvidiaSpec;
  std::ofstream(dir / "broken.json") << "{";
  std::ofstream(dir / "README") << "not a spec, not read";
  std::vector<std::string> problems;
  const CdiRegistry registry = CdiRegistry::Load({dir.string(), (dir / "missing").string()}, &problems);
  EXPECT_EQ(registry.size(), 1u);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0], HasSubstr("broken.json"));
  EXPECT_TRUE(registry.Device(kGpuKind, {"1"}).ok());
  fs::remove_all(dir);
}

TEST(CdiTest, FakeGpusGetAFakeSpec) {
  CdiRegistry registry;
  registry.Add(FakeGpuCdiSpec({{0, "GPU-fake-0"}, {1, "GPU-fake-1"}}, "/tmp/driver"));
  Result<ContainerEdits> gpu = registry.Device(kGpuKind, {"GPU-fake-1"});
  ASSERT_TRUE(gpu.ok());
  ASSERT_EQ(gpu->device_nodes.size(), 2u);
  EXPECT_EQ(gpu->device_nodes[1].path, "/dev/nvidia1");
  EXPECT_EQ(gpu->env, std::vector<std::string>{"TESSERA_CDI_FAKE=1"});
  ASSERT_EQ(gpu->mounts.size(), 1u);
  EXPECT_EQ(gpu->mounts[0].source, "/tmp/driver");
  EXPECT_TRUE(registry.Device(kGpuKind, {"0"}).ok());
}

}  // namespace
}  // namespace tessera::node
