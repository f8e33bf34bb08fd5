#include "node/launch/cgroups.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "node/launch/test_temp_dir.h"

namespace tessera::node {
namespace {

using Version = CgroupSupport::Version;

// Detection against a temp dir standing for the filesystem. The tests create the
// files the kernel would show, the parent group's included (as if it existed).
class FakeCgroupsTest : public testing::Test {
 protected:
  std::unique_ptr<Cgroups> Detect(std::string_view mountinfo, std::string_view proc_self_cgroup) {
    return Cgroups::DetectFrom(mountinfo, proc_self_cgroup, fs_.path(), "tessera");
  }
  TestTempDir fs_;
};

constexpr char kHybridMountinfo[] =
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
constexpr char kHybridCgroup[] = "4:memory:/process_api/61ee\n1:cpu:/\n0::/\n";
constexpr char kV2Mountinfo[] = "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n";

TEST_F(FakeCgroupsTest, HybridUsesV1ForBothControllers) {
  fs_.Write("sys/fs/cgroup/unified/cgroup.controllers", "");
  fs_.Write("sys/fs/cgroup/cpu/tessera/cgroup.procs", "");
  fs_.Write("sys/fs/cgroup/memory/process_api/61ee/tessera/cgroup.procs", "");
  const auto cgroups = Detect(kHybridMountinfo, kHybridCgroup);
  const CgroupSupport& s = cgroups->support();
  EXPECT_EQ(s.version, Version::kV1);
  EXPECT_TRUE(s.cpu && s.memory);
  EXPECT_EQ(s.cpu_dir, fs_ / "sys/fs/cgroup/cpu/tessera");
  EXPECT_EQ(s.memory_dir, fs_ / "sys/fs/cgroup/memory/process_api/61ee/tessera");
  EXPECT_EQ(s.root, s.cpu_dir);
  EXPECT_EQ(s.why_not, "");
  EXPECT_EQ(cgroups->Describe(), "cgroup v1: cpu at " + s.cpu_dir + ", memory at " + s.memory_dir);
  // The leaf sits at different paths in the two hierarchies: a container
  // runtime is given a relative path, which it nests below the leaf it runs in.
  EXPECT_EQ(cgroups->RuntimePath("task-1"), "container");
  // And v1 counts an OOM kill in the victim's group only: the nested one is read too.
  const std::string leaf = "sys/fs/cgroup/memory/process_api/61ee/tessera/task-1";
  fs_.Write(leaf + "/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
  fs_.Write(leaf + "/container/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
  EXPECT_FALSE(cgroups->OomKilled("task-1"));
  fs_.Write(leaf + "/container/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
  EXPECT_TRUE(cgroups->OomKilled("task-1"));
}

TEST_F(FakeCgroupsTest, HybridWithoutMemoryHierarchySaysWhy) {
  fs_.Write("sys/fs/cgroup/unified/cgroup.controllers", "");
  fs_.Write("sys/fs/cgroup/cpu/tessera/cgroup.procs", "");
  const auto cgroups = Detect(kHybridMountinfo, "1:cpu:/\n0::/\n");
  EXPECT_EQ(cgroups->support().version, Version::kV1);
  EXPECT_TRUE(cgroups->support().cpu);
  EXPECT_FALSE(cgroups->support().memory);
  EXPECT_NE(cgroups->Describe().find("tasks run without memory limits"), std::string::npos);
  EXPECT_NE(cgroups->Describe().find("no v1 memory hierarchy is mounted"), std::string::npos)
      << cgroups->Describe();
}

TEST_F(FakeCgroupsTest, PureV2EnablesControllersAndCreatesTheParent) {
  fs_.Write("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
  fs_.Write("sys/fs/cgroup/cgroup.subtree_control", "");
  fs_.Write("sys/fs/cgroup/cgroup.procs", "1\n");
  fs_.Write("sys/fs/cgroup/tessera/cgroup.subtree_control", "");
  const auto cgroups = Detect(kV2Mountinfo, "0::/\n");
  const CgroupSupport& s = cgroups->support();
  EXPECT_EQ(s.version, Version::kV2);
  EXPECT_TRUE(s.cpu && s.memory);
  EXPECT_EQ(s.root, fs_ / "sys/fs/cgroup/tessera");
  EXPECT_EQ(s.memory_dir, s.root);
  // The last controller enabled, written as the kernel wants it ("+memory").
  EXPECT_EQ(ReadAll(fs_ / "sys/fs/cgroup/cgroup.subtree_control"), "+memory");
  EXPECT_EQ(cgroups->Describe(), "cgroup v2 at " + s.root + ": cpu, memory");
  EXPECT_EQ(cgroups->RuntimePath("task-1"), "/tessera/task-1");
}

TEST_F(FakeCgroupsTest, PrepareMakesTheLeafWithItsLimitsAndNamesTheFileToJoin) {
  fs_.Write("sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
  fs_.Write("sys/fs/cgroup/cgroup.subtree_control", "");
  fs_.Write("sys/fs/cgroup/cgroup.procs", "1\n");
  fs_.Write("sys/fs/cgroup/tessera/cgroup.subtree_control", "");
  // The files the kernel would show in the new leaf (memory.swap.max is
  // optional: absent without swap accounting).
  fs_.Write("sys/fs/cgroup/tessera/task-1/cpu.max", "");
  fs_.Write("sys/fs/cgroup/tessera/task-1/memory.max", "");
  const auto cgroups = Detect(kV2Mountinfo, "0::/\n");
  const auto procs = cgroups->Prepare("task-1", 250, 64 << 20);
  ASSERT_TRUE(procs.ok()) << procs.status().message();
  EXPECT_EQ(*procs, std::vector<std::string>{fs_ / "sys/fs/cgroup/tessera/task-1/cgroup.procs"});
  EXPECT_EQ(ReadAll(fs_ / "sys/fs/cgroup/tessera/task-1/cpu.max"), "25000 100000");
  EXPECT_EQ(ReadAll(fs_ / "sys/fs/cgroup/tessera/task-1/memory.max"), std::to_string(64 << 20));
  EXPECT_FALSE(cgroups->Prepare("../escape", 0, 0).ok());
}

TEST_F(FakeCgroupsTest, V2FallsBackToTheParentWhenOurCgroupCannotDelegate) {
  // The agent runs in service/agent, whose subtree_control cannot be written here;
  // the service cgroup already delegates cpu and memory.
  const std::string service = "sys/fs/cgroup/system.slice/agent.service";
  fs_.Write(service + "/cgroup.controllers", "cpu memory\n");
  fs_.Write(service + "/cgroup.subtree_control", "cpu memory\n");
  fs_.Write(service + "/cgroup.procs", "");
  fs_.Write(service + "/agent/cgroup.controllers", "cpu memory\n");
  fs_.Write(service + "/tessera/cgroup.subtree_control", "");
  const auto cgroups = Detect(kV2Mountinfo, "0::/system.slice/agent.service/agent\n");
  EXPECT_EQ(cgroups->support().version, Version::kV2);
  EXPECT_EQ(cgroups->support().root, fs_ / (service + "/tessera"));
  EXPECT_EQ(ReadAll(fs_ / (service + "/cgroup.subtree_control")), "cpu memory\n");  // untouched
  // The container joins the task's leaf, named by its path in the hierarchy.
  EXPECT_EQ(cgroups->RuntimePath("task-1"), "/system.slice/agent.service/tessera/task-1");
}

TEST_F(FakeCgroupsTest, UnifiedMountWithoutControllersAndNoV1IsUnavailable) {
  fs_.Write("sys/fs/cgroup/unified/cgroup.controllers", "");
  const auto cgroups = Detect(kHybridMountinfo, "0::/\n");
  EXPECT_EQ(cgroups->support().version, Version::kNone);
  EXPECT_EQ(cgroups->Describe(),
            "cgroups unavailable: cgroup2 at /sys/fs/cgroup/unified offers no cpu or memory "
            "controller; tasks run without CPU/memory limits");
}

TEST_F(FakeCgroupsTest, NothingMountedIsUnavailable) {
  const auto cgroups = Detect("1 0 8:1 / / rw - ext4 /dev/sda1 rw\n", kHybridCgroup);
  EXPECT_EQ(cgroups->support().version, Version::kNone);
  EXPECT_EQ(cgroups->support().why_not,
            "no cgroup filesystem is mounted (see /proc/self/mountinfo)");
}

TEST_F(FakeCgroupsTest, ParentThatCannotBeCreatedIsReported) {
  // The cpu mount point is missing from the filesystem: mkdir fails.
  fs_.Write("sys/fs/cgroup/unified/cgroup.controllers", "");
  const auto cgroups = Detect(kHybridMountinfo, "1:cpu:/\n0::/\n");
  EXPECT_EQ(cgroups->support().version, Version::kNone);
  EXPECT_NE(cgroups->support().why_not.find("cannot create " + (fs_ / "sys/fs/cgroup/cpu/tessera")),
            std::string::npos)
      << cgroups->support().why_not;
}

TEST_F(FakeCgroupsTest, RemovesTheParentGroupItCreated) {
  fs_.Write("sys/fs/cgroup/unified/cgroup.controllers", "");
  fs_.Write("sys/fs/cgroup/cpu/cgroup.procs", "");
  // Created, but without the kernel's cgroup.procs in it, so not usable.
  auto cgroups = Detect(kHybridMountinfo, "1:cpu:/\n0::/\n");
  EXPECT_FALSE(cgroups->support().cpu);
  EXPECT_TRUE(std::filesystem::is_directory(fs_ / "sys/fs/cgroup/cpu/tessera"));
  cgroups.reset();
  EXPECT_FALSE(std::filesystem::exists(fs_ / "sys/fs/cgroup/cpu/tessera"));
}

// This machine, whatever it offers; the Place/OomKilled paths run in
// task_process_test.cc where the machine allows them.
TEST(RealCgroupsTest, DetectsSomethingConsistent) {
  const auto cgroups = Cgroups::Detect("tessera-test-" + std::to_string(getpid()));
  const CgroupSupport& s = cgroups->support();
  std::cout << "[ info     ] " << cgroups->Describe() << "\n";
  EXPECT_EQ(s.version == Version::kNone, !s.cpu && !s.memory);
  EXPECT_EQ(s.why_not.empty(), s.cpu && s.memory);
  EXPECT_EQ(s.cpu, std::filesystem::is_directory(s.cpu_dir)) << s.cpu_dir;
  EXPECT_EQ(s.memory, std::filesystem::is_directory(s.memory_dir)) << s.memory_dir;
}

}  // namespace
}  // namespace tessera::node
