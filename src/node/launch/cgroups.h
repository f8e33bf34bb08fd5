// CPU and memory limits for task processes through Linux cgroups, on whatever
// this machine offers: cgroup v2, v1, a hybrid of both, or nothing usable.
//
// Detection assumes nothing. It finds our cgroup in each hierarchy from
// /proc/self/mountinfo and /proc/self/cgroup (cgroup_layout.h), then asks the
// filesystem what it allows:
//   v2  the controllers our cgroup offers (cgroup.controllers). Sub-groups get a
//       controller only when their parent lists it in cgroup.subtree_control, and
//       a non-root cgroup holding processes cannot enable any (the "no internal
//       processes" rule, EBUSY). So the base is our own cgroup when it can enable
//       cpu/memory for its children, else its parent -- the layout of a systemd
//       service with Delegate=yes and DelegateSubgroup=, where the agent runs in
//       a leaf and its service cgroup is free to delegate. That parent already
//       enables every controller our cgroup offers (they are the same list), so
//       nothing above our cgroup changes but for the new group. Moving a process
//       between groups needs write access to cgroup.procs of their common
//       ancestor, which is the base.
//   v1  a hierarchy per controller; the base in each is our cgroup there.
// In a hybrid layout the controllers sit on v1 and the cgroup2 mount offers
// none; detection picks the version offering more of {cpu, memory} (v2 on a
// tie). Under the base it creates the parent group (default "tessera") and,
// per task, a leaf group `parent/<task name>` with the limits.
//
// Whatever is unavailable is reported in `why_not` (and Describe()) in words an
// operator can act on; tasks then run without that limit rather than not at all.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tessera::node {

struct CgroupSupport {
  enum class Version { kNone, kV1, kV2 };
  Version version = Version::kNone;
  // The parent group's directory: under v2 the only one; under v1, where each
  // controller has its own hierarchy, the cpu one (memory's when cpu is missing).
  std::string root;
  bool cpu = false;
  bool memory = false;
  std::string cpu_dir;     // the parent group in the cpu controller's hierarchy ("" without cpu)
  std::string memory_dir;  // likewise for memory; both equal `root` under v2
  std::string v2_path;     // v2: the parent group's path inside the hierarchy ("/tessera")
  std::string why_not;     // why cgroups, or one of the controllers, are unavailable
};

class Cgroups {
 public:
  // v1: the group a container runtime nests below a task's leaf (RuntimePath).
  static constexpr const char* kRuntimeGroup = "container";

  // Detects what this machine offers and creates the parent group `parent_name`
  // where allowed. Never fails: an unusable machine gives version kNone.
  static std::unique_ptr<Cgroups> Detect(const std::string& parent_name = "tessera");
  // The same from given file contents, with every cgroup path prefixed by
  // `fs_root` ("" for the real machine; a temp dir in tests).
  static std::unique_ptr<Cgroups> DetectFrom(std::string_view mountinfo,
                                             std::string_view proc_self_cgroup,
                                             const std::string& fs_root,
                                             const std::string& parent_name);

  // Removes the parent groups this object created, when empty (best effort:
  // a group still holding a task stays for the next agent).
  ~Cgroups();
  Cgroups(const Cgroups&) = delete;
  Cgroups& operator=(const Cgroups&) = delete;

  const CgroupSupport& support() const { return support_; }

  // One line for the agent's log, e.g. "cgroup v2 at /sys/fs/cgroup/tessera: cpu, memory",
  // "cgroups unavailable: <why>; tasks run without CPU/memory limits".
  std::string Describe() const;

  // Creates the leaf group `name` under the parent in each supported hierarchy
  // and sets the limits that are > 0 -- cpu (v2 cpu.max "quota period"; v1
  // cpu.cfs_quota_us / cpu.cfs_period_us, period 100ms) and memory (v2
  // memory.max, and memory.swap.max 0; v1 memory.limit_in_bytes and
  // memory.memsw.limit_in_bytes; swap is disabled so a task over its limit is
  // OOM-killed rather than slowed down). Limits on a controller the machine
  // lacks are skipped: support() says which. Returns the leaves' cgroup.procs
  // files: a process joins the group by writing "0" to each (the writer moves
  // itself), which the launcher's child does before exec, so the limits hold
  // from the task's first instruction.
  Result<std::vector<std::string>> Prepare(const std::string& name, std::int64_t cpu_milli,
                                           std::int64_t memory_bytes);

  // The cgroup.procs files of the existing group `name`, for a process that
  // joins a running task's group (`tessera exec`): it shares the task's limits.
  std::vector<std::string> ProcsFiles(const std::string& name) const;

  // What a container runtime's cgroupsPath (runc's linux.cgroupsPath) must
  // be for the container's processes to stay inside task `name`'s limits,
  // given that the runtime runs in the task's group: under v2 the leaf's path
  // in the hierarchy (the container joins the leaf); under v1, where each
  // controller's hierarchy may place the leaf elsewhere, a relative path,
  // which runc nests below its own group -- the leaf -- in every hierarchy,
  // and a child is held to its parent's limits. "" without cgroups.
  std::string RuntimePath(const std::string& name) const;

  // Removes the leaf group once its task has exited. Processes that escaped the
  // task's process group (setsid) but not its cgroup are killed first. Best
  // effort: a group that stays busy (a process in uninterruptible sleep) is left.
  void Remove(const std::string& name);

  // Whether the kernel OOM-killed a process in group `name` (v2 memory.events
  // oom_kill; v1 memory.oom_control oom_kill, or memory.failcnt on kernels
  // before 4.13). v1 counts a kill only in the victim's own group, so the
  // runtime's group nested below the leaf (RuntimePath) is read too: the
  // runtime must keep it until then (`runc run --keep`). Read it before Remove.
  bool OomKilled(const std::string& name) const;

 private:
  Cgroups() = default;

  // The leaf directories for `name`: one under v2, one per controller (deduplicated) under v1.
  std::vector<std::string> LeafDirs(const std::string& name) const;

  CgroupSupport support_;
  std::vector<std::string> created_;  // parent groups this object made
};

}  // namespace tessera::node
