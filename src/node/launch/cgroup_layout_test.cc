#include "node/launch/cgroup_layout.h"

#include <gtest/gtest.h>

namespace tessera::node {
namespace {

// The development machine: v1 controllers each on its own mount, plus a cgroup2
// mount at /sys/fs/cgroup/unified (which offers no controllers).
constexpr char kHybridMountinfo[] =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
constexpr char kHybridCgroup[] =
    "9:name=systemd:/\n"
    "4:memory:/process_api/61ee\n"
    "3:cpuset:/\n"
    "2:cpuacct:/\n"
    "1:cpu:/\n"
    "0::/\n";

TEST(CgroupLayoutTest, HybridFindsEachV1ControllerAndTheUnifiedMount) {
  const CgroupLayout layout = LocateCgroups(kHybridMountinfo, kHybridCgroup);
  EXPECT_EQ(layout.v2.dir(), "/sys/fs/cgroup/unified");
  EXPECT_EQ(layout.v1_cpu.dir(), "/sys/fs/cgroup/cpu");  // not cpuacct, not cpuset
  EXPECT_EQ(layout.v1_memory.mount_point, "/sys/fs/cgroup/memory");
  EXPECT_EQ(layout.v1_memory.dir(), "/sys/fs/cgroup/memory/process_api/61ee");
}

TEST(CgroupLayoutTest, PureV2HasOnlyTheUnifiedHierarchy) {
  const CgroupLayout layout = LocateCgroups(
      "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
      "rw,nsdelegate,memory_recursiveprot\n",
      "0::/system.slice/tessera-agent.service\n");
  EXPECT_EQ(layout.v2.path, "/system.slice/tessera-agent.service");
  EXPECT_EQ(layout.v2.dir(), "/sys/fs/cgroup/system.slice/tessera-agent.service");
  EXPECT_FALSE(layout.v1_cpu.found());
  EXPECT_FALSE(layout.v1_memory.found());
  EXPECT_EQ(layout.v1_cpu.why_not, "");
}

TEST(CgroupLayoutTest, PureV1WithCpuAndCpuacctMountedTogether) {
  const CgroupLayout layout = LocateCgroups(
      "26 25 0:23 / /sys/fs/cgroup/systemd rw shared:10 - cgroup cgroup rw,xattr,name=systemd\n"
      "28 25 0:25 / /sys/fs/cgroup/cpuset rw shared:12 - cgroup cgroup rw,cpuset\n"
      "29 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw shared:13 - cgroup cgroup rw,cpu,cpuacct\n"
      "30 25 0:27 / /sys/fs/cgroup/memory rw shared:14 - cgroup cgroup rw,memory\n",
      "12:memory:/system.slice/tessera.service\n"
      "4:cpu,cpuacct:/system.slice/tessera.service\n"
      "3:cpuset:/\n"
      "1:name=systemd:/system.slice/tessera.service\n");
  EXPECT_FALSE(layout.v2.found());
  EXPECT_EQ(layout.v1_cpu.dir(), "/sys/fs/cgroup/cpu,cpuacct/system.slice/tessera.service");
  EXPECT_EQ(layout.v1_memory.dir(), "/sys/fs/cgroup/memory/system.slice/tessera.service");
}

TEST(CgroupLayoutTest, MountShowingASubtreeIsStrippedFromOurPath) {
  // A container without a cgroup namespace: the mount shows /docker/abc only.
  const CgroupLayout layout =
      LocateCgroups("700 690 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n",
                    "4:memory:/docker/abc/inner\n");
  EXPECT_EQ(layout.v1_memory.dir(), "/sys/fs/cgroup/memory/inner");
}

TEST(CgroupLayoutTest, CgroupOutsideEveryMountIsUnreachableWithAReason) {
  const CgroupLayout layout =
      LocateCgroups("700 690 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n",
                    "4:memory:/docker/other\n");
  EXPECT_FALSE(layout.v1_memory.found());
  EXPECT_NE(layout.v1_memory.why_not.find("/docker/other lies outside its mount"),
            std::string::npos)
      << layout.v1_memory.why_not;
}

TEST(CgroupLayoutTest, UnescapesMountPointsAndIgnoresOtherFilesystems) {
  const CgroupLayout layout = LocateCgroups(
      "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
      "30 23 0:26 / /mnt/my\\040cgroups rw - cgroup2 cgroup2 rw\n",
      "0::/\n");
  EXPECT_EQ(layout.v2.dir(), "/mnt/my cgroups");
}

TEST(CgroupLayoutTest, NothingMountedFindsNothing) {
  const CgroupLayout layout = LocateCgroups("1 0 8:1 / / rw - ext4 /dev/sda1 rw\n", kHybridCgroup);
  EXPECT_FALSE(layout.v2.found());
  EXPECT_FALSE(layout.v1_cpu.found());
  EXPECT_FALSE(layout.v1_memory.found());
}

}  // namespace
}  // namespace tessera::node
