#include "node/container/oci_config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace tessera::node {
namespace {

using nlohmann::json;

ContainerSpec Spec() {
  ContainerSpec spec;
  spec.rootfs = "/var/lib/tessera/tasks/3.1.0/rootfs";
  spec.args = {"python3", "train.py"};
  spec.env = {"PATH=/usr/bin", "TESSERA_JOB_ID=3"};
  spec.cwd = "/workspace";
  spec.hostname = "worker-0";
  spec.cgroups_path = "/tessera/job3-task0-a1";
  return spec;
}

bool HasNamespace(const json& config, const std::string& type) {
  const json& namespaces = config["linux"]["namespaces"];
  return std::any_of(namespaces.begin(), namespaces.end(), [&](const json& n) { return n["type"] == type; });
}

const json* FindMount(const json& config, const std::string& destination) {
  for (const json& m : config["mounts"]) {
    if (m["destination"] == destination) return &m;
  }
  return nullptr;
}

bool HasOption(const json& mount, const std::string& option) {
  const json& options = mount["options"];
  return std::find(options.begin(), options.end(), option) != options.end();
}

TEST(OciConfigTest, ProcessRootAndCgroupAreTheTasks) {
  const json config = OciRuntimeConfig(Spec());
  EXPECT_EQ(config["ociVersion"], "1.0.2");
  EXPECT_EQ(config["process"]["args"], json({"python3", "train.py"}));
  EXPECT_EQ(config["process"]["env"], json({"PATH=/usr/bin", "TESSERA_JOB_ID=3"}));
  EXPECT_EQ(config["process"]["cwd"], "/workspace");
  EXPECT_EQ(config["process"]["terminal"], false);
  EXPECT_EQ(config["process"]["noNewPrivileges"], true);
  EXPECT_EQ(config["root"]["path"], "/var/lib/tessera/tasks/3.1.0/rootfs");
  EXPECT_EQ(config["hostname"], "worker-0");
  EXPECT_EQ(config["linux"]["cgroupsPath"], "/tessera/job3-task0-a1");
}

TEST(OciConfigTest, HostNetworkByDefaultAnIsolatedOneWhenAsked) {
  ContainerSpec spec = Spec();
  json config = OciRuntimeConfig(spec);
  for (const char* type : {"pid", "ipc", "uts", "mount"}) EXPECT_TRUE(HasNamespace(config, type)) << type;
  EXPECT_FALSE(HasNamespace(config, "network")) << "NCCL and RDMA need the host network";

  spec.host_network = false;
  spec.network_namespace = "/run/netns/tessera-job3";
  config = OciRuntimeConfig(spec);
  ASSERT_TRUE(HasNamespace(config, "network"));
  for (const json& n : config["linux"]["namespaces"]) {
    if (n["type"] == "network") {
      EXPECT_EQ(n["path"], "/run/netns/tessera-job3");
    }
  }
}

TEST(OciConfigTest, ShmIsTheSizeAskedAndBindMountsAreReadOnlyUnlessAsked) {
  ContainerSpec spec = Spec();
  spec.shm_bytes = std::int64_t{16} << 30;
  spec.mounts = {{"/datasets/imagenet", "/data", true}, {"/checkpoints/job3", "/ckpt", false}};
  const json config = OciRuntimeConfig(spec);
  const json* shm = FindMount(config, "/dev/shm");
  ASSERT_NE(shm, nullptr);
  EXPECT_TRUE(HasOption(*shm, "size=17179869184"));
  const json* data = FindMount(config, "/data");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ((*data)["source"], "/datasets/imagenet");
  EXPECT_TRUE(HasOption(*data, "ro"));
  const json* ckpt = FindMount(config, "/ckpt");
  ASSERT_NE(ckpt, nullptr);
  EXPECT_TRUE(HasOption(*ckpt, "rw"));
  EXPECT_FALSE(HasOption(*ckpt, "ro"));
}

TEST(OciConfigTest, RootKeepsDockersCapabilitiesOthersKeepNone) {
  ContainerSpec spec = Spec();
  json caps = OciRuntimeConfig(spec)["process"]["capabilities"];
  EXPECT_EQ(caps["bounding"].size(), 14u);
  EXPECT_NE(std::find(caps["bounding"].begin(), caps["bounding"].end(), "CAP_KILL"), caps["bounding"].end());
  EXPECT_EQ(std::find(caps["bounding"].begin(), caps["bounding"].end(), "CAP_SYS_ADMIN"), caps["bounding"].end());

  spec.uid = 1000;
  spec.gid = 1000;
  const json config = OciRuntimeConfig(spec);
  EXPECT_TRUE(config["process"]["capabilities"]["effective"].empty());
  EXPECT_EQ(config["process"]["user"], json({{"uid", 1000}, {"gid", 1000}}));
}

TEST(OciConfigTest, SeccompRefusesWhatDockerRefusesAndKeepsTheNumaCalls) {
  const json seccomp = OciRuntimeConfig(Spec())["linux"]["seccomp"];
  EXPECT_EQ(seccomp["defaultAction"], "SCMP_ACT_ALLOW");
  const json& names = seccomp["syscalls"][0]["names"];
  EXPECT_EQ(seccomp["syscalls"][0]["action"], "SCMP_ACT_ERRNO");
  for (const char* blocked : {"mount", "kexec_load", "init_module", "ptrace", "unshare", "setns"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), blocked), names.end()) << blocked;
  }
  for (const char* kept : {"mbind", "get_mempolicy", "set_mempolicy", "clone"}) {
    EXPECT_EQ(std::find(names.begin(), names.end(), kept), names.end()) << kept;
  }
}

TEST(OciConfigTest, DevicesAreCreatedAndAllowedAndNothingElseIs) {
  ContainerSpec spec = Spec();
  spec.devices = {{"/dev/nvidia0", 'c', 195, 0, 0666}, {"/dev/nvidiactl", 'c', 195, 255, 0666}};
  const json linux = OciRuntimeConfig(spec)["linux"];
  ASSERT_EQ(linux["devices"].size(), 2u);
  EXPECT_EQ(linux["devices"][0]["path"], "/dev/nvidia0");
  EXPECT_EQ(linux["devices"][1]["minor"], 255);
  const json& rules = linux["resources"]["devices"];
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0], json({{"allow", false}, {"access", "rwm"}})) << "everything else is denied first";
  EXPECT_EQ(rules[1]["major"], 195);
  EXPECT_EQ(rules[1]["allow"], true);
}

TEST(OciConfigTest, KernelPathsAreMaskedAndSysIsReadOnly) {
  const json config = OciRuntimeConfig(Spec());
  const json& masked = config["linux"]["maskedPaths"];
  EXPECT_NE(std::find(masked.begin(), masked.end(), "/proc/kcore"), masked.end());
  const json& readonly = config["linux"]["readonlyPaths"];
  EXPECT_NE(std::find(readonly.begin(), readonly.end(), "/proc/sys"), readonly.end());
  const json* sys = FindMount(config, "/sys");
  ASSERT_NE(sys, nullptr);
  EXPECT_TRUE(HasOption(*sys, "ro"));
}

}  // namespace
}  // namespace tessera::node
