// Where this process's cgroups are in the filesystem, worked out from the text
// of /proc/self/mountinfo and /proc/self/cgroup.
//
// Machines mount cgroups in three ways, and the agent must not assume one:
//   pure v2   one "cgroup2" mount (usually /sys/fs/cgroup) holding every controller;
//   pure v1   one "cgroup" mount per hierarchy, the controllers named in its super
//             options ("cpu,cpuacct" together, "memory" alone, "name=systemd" with none);
//   hybrid    v1 hierarchies for the controllers plus a cgroup2 mount (often
//             /sys/fs/cgroup/unified) that systemd uses for tracking only: it
//             offers no controllers, which only its cgroup.controllers file shows.
// A mount may expose a sub-tree rather than the hierarchy's root (its mountinfo
// "root" field, e.g. "/docker/abc" in a container without a cgroup namespace);
// our directory is then the mount point plus our /proc/self/cgroup path with that
// root stripped. When our path lies outside every mount of a hierarchy, that
// hierarchy is unreachable and its CgroupDir says why.
//
// Pure functions over the files' text (no filesystem access), so tests can
// describe any machine.
#pragma once

#include <string>
#include <string_view>

namespace tessera::node {

// Our cgroup in one hierarchy. `mount_point` is absolute as mountinfo gives it;
// `path` is our cgroup relative to that mount, "/" when we sit at its top.
struct CgroupDir {
  std::string mount_point;  // "" when not found
  std::string path;
  std::string why_not;  // when mounted but our cgroup is outside every mount of it

  bool found() const { return !mount_point.empty(); }
  std::string dir() const { return path == "/" ? mount_point : mount_point + path; }
};

struct CgroupLayout {
  CgroupDir v2;         // the cgroup2 (unified) hierarchy, whatever controllers it offers
  CgroupDir v1_cpu;     // the v1 hierarchy holding the "cpu" controller
  CgroupDir v1_memory;  // the v1 hierarchy holding the "memory" controller
};

CgroupLayout LocateCgroups(std::string_view mountinfo, std::string_view proc_self_cgroup);

}  // namespace tessera::node
