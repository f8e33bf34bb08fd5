#include "node/launch/cgroups.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>
#include <utility>

#include "node/launch/cgroup_layout.h"

namespace tessera::node {
namespace {

constexpr std::int64_t kCpuPeriodUs = 100'000;
constexpr std::int64_t kMinCpuQuotaUs = 1'000;  // the kernel refuses quotas under 1ms
constexpr const char* kControllers[] = {"cpu", "memory"};

std::string ErrnoText(int err) { return std::error_code(err, std::generic_category()).message(); }

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Writes into an existing cgroup file; returns 0 or an errno. Never O_CREAT: a
// missing file means a missing controller, which must not pass silently.
int WriteFile(const std::string& path, const std::string& value) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  const ssize_t written = write(fd, value.data(), value.size());
  const int err = written < 0 ? errno : (std::cmp_equal(written, value.size()) ? 0 : EIO);
  close(fd);
  return err;
}

std::vector<std::string> Words(std::string_view text) {
  std::vector<std::string> words;
  std::istringstream in{std::string(text)};
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

bool Contains(const std::vector<std::string>& items, std::string_view item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : std::string(sep)) + item;
  return out;
}

std::optional<std::int64_t> ParseInt(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The number after `key` in a file of "key value" lines (memory.events, memory.oom_control).
std::optional<std::int64_t> Counter(const std::optional<std::string>& text, std::string_view key) {
  const std::vector<std::string> words = Words(text.value_or(""));
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    if (words[i] == key) return ParseInt(words[i + 1]);
  }
  return std::nullopt;
}

// What detection has found so far; becomes the Cgroups object.
struct Detection {
  CgroupSupport support;
  std::vector<std::string> created;  // parent groups made here
  std::vector<std::string> why;      // reasons something is unavailable

  // mkdir that accepts an existing directory; returns 0 or an errno.
  int MakeDir(const std::string& path) {
    if (mkdir(path.c_str(), 0755) == 0) {
      created.push_back(path);
      return 0;
    }
    return errno == EEXIST ? 0 : errno;
  }
};

// Enables `wanted` controllers for the sub-groups of `base` (v2); returns those enabled.
std::vector<std::string> EnableForChildren(const std::string& base,
                                           const std::vector<std::string>& wanted, Detection& d) {
  const std::vector<std::string> subtree =
      Words(ReadFile(base + "/cgroup.subtree_control").value_or(""));
  std::vector<std::string> enabled;
  for (const std::string& controller : wanted) {
    const int err = Contains(subtree, controller)
                        ? 0
                        : WriteFile(base + "/cgroup.subtree_control", "+" + controller);
    if (err == 0) {
      enabled.push_back(controller);
    } else {
      d.why.push_back("cannot enable " + controller + " for sub-groups of " + base + ": " +
                      ErrnoText(err) +
                      (err == EBUSY ? " (a cgroup holding processes cannot delegate controllers; "
                                      "run the agent in a leaf of a delegated sub-tree, e.g. "
                                      "systemd Delegate=yes with DelegateSubgroup=)"
                                    : ""));
    }
  }
  return enabled;
}

void SetUpV2(const CgroupDir& ours, const std::vector<std::string>& offered,
             const std::string& fs_root, const std::string& parent_name, Detection& d) {
  // Our own cgroup first; its parent when ours cannot delegate (see the header).
  // Each base as a directory and as its path inside the hierarchy.
  std::vector<std::pair<std::string, std::string>> bases = {{fs_root + ours.dir(), ours.path == "/" ? "" : ours.path}};
  if (ours.path != "/") {
    const std::string up = ours.path.substr(0, ours.path.rfind('/'));
    bases.emplace_back(fs_root + ours.mount_point + up, up);
  }
  for (const auto& [base, base_path] : bases) {
    std::vector<std::string> enabled = EnableForChildren(base, offered, d);
    if (enabled.empty()) continue;
    if (access((base + "/cgroup.procs").c_str(), W_OK) != 0) {
      d.why.push_back("cannot move tasks: " + base + "/cgroup.procs: " + ErrnoText(errno));
      continue;
    }
    const std::string parent = base + "/" + parent_name;
    if (const int err = d.MakeDir(parent); err != 0) {
      d.why.push_back("cannot create " + parent + ": " + ErrnoText(err));
      continue;
    }
    CgroupSupport& s = d.support;
    for (const std::string& controller : enabled) {
      if (const int err = WriteFile(parent + "/cgroup.subtree_control", "+" + controller)) {
        d.why.push_back("cannot enable " + controller + " in " + parent + ": " + ErrnoText(err));
        continue;
      }
      (controller == "cpu" ? s.cpu : s.memory) = true;
    }
    if (!s.cpu && !s.memory) continue;
    s.version = CgroupSupport::Version::kV2;
    s.root = s.cpu_dir = s.memory_dir = parent;
    s.v2_path = base_path + "/" + parent_name;
    for (const char* controller : kControllers) {
      if (!Contains(offered, controller)) {
        d.why.push_back(std::string("no ") + controller + " controller in " + bases.front().first +
                        "/cgroup.controllers");
      }
    }
    return;
  }
}

void SetUpV1(const CgroupLayout& layout, const std::string& fs_root, const std::string& parent_name,
             Detection& d) {
  CgroupSupport& s = d.support;
  for (const auto& [name, ours, supported, dir] :
       {std::tuple{"cpu", &layout.v1_cpu, &s.cpu, &s.cpu_dir},
        std::tuple{"memory", &layout.v1_memory, &s.memory, &s.memory_dir}}) {
    if (!ours->found()) {
      d.why.push_back(ours->why_not.empty() ? std::string("no v1 ") + name + " hierarchy is mounted"
                                            : ours->why_not);
      continue;
    }
    const std::string parent = fs_root + ours->dir() + "/" + parent_name;
    if (const int err = d.MakeDir(parent); err != 0) {
      d.why.push_back("cannot create " + parent + ": " + ErrnoText(err));
    } else if (access((parent + "/cgroup.procs").c_str(), W_OK) != 0) {
      d.why.push_back("cannot move tasks: " + parent + "/cgroup.procs: " + ErrnoText(errno));
    } else {
      *supported = true;
      *dir = parent;
    }
  }
  if (s.cpu || s.memory) {
    s.version = CgroupSupport::Version::kV1;
    s.root = s.cpu ? s.cpu_dir : s.memory_dir;
  }
}

}  // namespace

std::unique_ptr<Cgroups> Cgroups::Detect(const std::string& parent_name) {
  return DetectFrom(ReadFile("/proc/self/mountinfo").value_or(""),
                    ReadFile("/proc/self/cgroup").value_or(""), "", parent_name);
}

std::unique_ptr<Cgroups> Cgroups::DetectFrom(std::string_view mountinfo,
                                             std::string_view proc_self_cgroup,
                                             const std::string& fs_root,
                                             const std::string& parent_name) {
  const CgroupLayout layout = LocateCgroups(mountinfo, proc_self_cgroup);
  Detection d;

  // What each version offers, read without changing anything.
  std::vector<std::string> v2_offered;
  if (!layout.v2.found()) {
    d.why.push_back(layout.v2.why_not.empty() ? "cgroup2 is not mounted" : layout.v2.why_not);
  } else if (auto controllers = ReadFile(fs_root + layout.v2.dir() + "/cgroup.controllers")) {
    for (const char* c : kControllers) {
      if (Contains(Words(*controllers), c)) v2_offered.push_back(c);
    }
    if (v2_offered.empty()) {
      d.why.push_back("cgroup2 at " + layout.v2.mount_point +
                      " offers no cpu or memory controller");
    }
  } else {
    d.why.push_back("cannot read " + fs_root + layout.v2.dir() + "/cgroup.controllers");
  }
  const std::size_t v1_offered =
      std::size_t{layout.v1_cpu.found()} + std::size_t{layout.v1_memory.found()};

  if (!v2_offered.empty() && v2_offered.size() >= v1_offered) {
    SetUpV2(layout.v2, v2_offered, fs_root, parent_name, d);
  } else if (v1_offered > 0) {
    SetUpV1(layout, fs_root, parent_name, d);
  } else if (!layout.v1_cpu.why_not.empty() || !layout.v1_memory.why_not.empty()) {
    for (const CgroupDir* dir : {&layout.v1_cpu, &layout.v1_memory}) {
      if (!dir->why_not.empty()) d.why.push_back(dir->why_not);
    }
  } else if (!layout.v2.found() && layout.v2.why_not.empty()) {
    d.why = {"no cgroup filesystem is mounted (see /proc/self/mountinfo)"};
  }

  auto cgroups = std::unique_ptr<Cgroups>(new Cgroups());
  cgroups->support_ = std::move(d.support);
  if (!cgroups->support_.cpu || !cgroups->support_.memory)
    cgroups->support_.why_not = Join(d.why, "; ");
  cgroups->created_ = std::move(d.created);
  return cgroups;
}

Cgroups::~Cgroups() {
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) rmdir(it->c_str());
}

std::string Cgroups::Describe() const {
  const CgroupSupport& s = support_;
  if (s.version == CgroupSupport::Version::kNone) {
    return "cgroups unavailable: " + s.why_not + "; tasks run without CPU/memory limits";
  }
  const bool v2 = s.version == CgroupSupport::Version::kV2;
  std::vector<std::string> parts;
  if (s.cpu) parts.push_back(v2 ? "cpu" : "cpu at " + s.cpu_dir);
  if (s.memory) parts.push_back(v2 ? "memory" : "memory at " + s.memory_dir);
  std::string line = (v2 ? "cgroup v2 at " + s.root + ": " : "cgroup v1: ") + Join(parts, ", ");
  if (!s.cpu) line += "; tasks run without CPU limits: " + s.why_not;
  if (!s.memory) line += "; tasks run without memory limits: " + s.why_not;
  return line;
}

std::vector<std::string> Cgroups::ProcsFiles(const std::string& name) const {
  std::vector<std::string> procs;
  for (const std::string& leaf : LeafDirs(name)) procs.push_back(leaf + "/cgroup.procs");
  return procs;
}

std::string Cgroups::RuntimePath(const std::string& name) const {
  switch (support_.version) {
    case CgroupSupport::Version::kV2: return support_.v2_path + "/" + name;
    case CgroupSupport::Version::kV1: return kRuntimeGroup;
    case CgroupSupport::Version::kNone: break;
  }
  return "";
}

std::vector<std::string> Cgroups::LeafDirs(const std::string& name) const {
  std::vector<std::string> dirs;
  if (support_.cpu) dirs.push_back(support_.cpu_dir + "/" + name);
  if (support_.memory && !(support_.cpu && support_.memory_dir == support_.cpu_dir)) {
    dirs.push_back(support_.memory_dir + "/" + name);
  }
  return dirs;
}

Result<std::vector<std::string>> Cgroups::Prepare(const std::string& name,
                                                  std::int64_t cpu_milli,
                                                  std::int64_t memory_bytes) {
  if (support_.version == CgroupSupport::Version::kNone) {
    return FailedPrecondition("cgroups unavailable: " + support_.why_not);
  }
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    return InvalidArgument("cgroup name \"" + name + "\" is not a plain directory name");
  }
  const bool v2 = support_.version == CgroupSupport::Version::kV2;
  const std::string period = std::to_string(kCpuPeriodUs);
  const std::string quota =
      std::to_string(std::max(kMinCpuQuotaUs, cpu_milli * kCpuPeriodUs / 1000));
  const std::string bytes = std::to_string(memory_bytes);

  // The writes per leaf directory, in order; `optional` ones are skipped when
  // the file is absent (no swap accounting configured).
  struct Write {
    std::string file, value;
    bool optional = false;
  };
  std::vector<std::pair<std::string, std::vector<Write>>> leaves;
  const auto add = [&](const std::string& parent, const std::vector<Write>& writes) {
    const std::string leaf = parent + "/" + name;
    auto it =
        std::find_if(leaves.begin(), leaves.end(), [&](const auto& l) { return l.first == leaf; });
    if (it == leaves.end()) it = leaves.insert(leaves.end(), {leaf, {}});
    it->second.insert(it->second.end(), writes.begin(), writes.end());
  };
  std::vector<Write> cpu_writes, memory_writes;
  if (cpu_milli > 0 && v2) cpu_writes = {{"cpu.max", quota + " " + period}};
  if (cpu_milli > 0 && !v2)
    cpu_writes = {{"cpu.cfs_period_us", period}, {"cpu.cfs_quota_us", quota}};
  if (memory_bytes > 0 && v2)
    memory_writes = {{"memory.max", bytes}, {"memory.swap.max", "0", true}};
  // v1 wants memsw >= limit at all times, so the limit goes first.
  if (memory_bytes > 0 && !v2) {
    memory_writes = {{"memory.limit_in_bytes", bytes},
                     {"memory.memsw.limit_in_bytes", bytes, true}};
  }
  if (support_.cpu) add(support_.cpu_dir, cpu_writes);
  if (support_.memory) add(support_.memory_dir, memory_writes);

  std::vector<std::string> procs;
  for (const auto& [leaf, writes] : leaves) {
    if (mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) {
      return FailedPrecondition("cannot create cgroup " + leaf + ": " + ErrnoText(errno));
    }
    procs.push_back(leaf + "/cgroup.procs");
    for (const Write& w : writes) {
      const int err = WriteFile(leaf + "/" + w.file, w.value);
      if (err == ENOENT && w.optional) continue;
      if (err != 0) {
        return FailedPrecondition("cgroup " + leaf + "/" + w.file + ": cannot write " + w.value +
                                  ": " + ErrnoText(err));
      }
    }
  }
  return procs;
}

void Cgroups::Remove(const std::string& name) {
  using std::chrono::steady_clock;
  for (const std::string& leaf : LeafDirs(name)) {
    if (rmdir(leaf.c_str()) == 0 || errno != EBUSY) continue;
    // Still populated: kill what is left (cgroup.kill on v2 since Linux 5.14, else
    // each listed pid: one could exit and be reused between the read and the kill
    // only if the pid space wrapped around in between).
    if (WriteFile(leaf + "/cgroup.kill", "1") != 0) {
      for (const std::string& pid : Words(ReadFile(leaf + "/cgroup.procs").value_or(""))) {
        if (auto number = ParseInt(pid)) kill(static_cast<pid_t>(*number), SIGKILL);
      }
    }
    // Killed processes leave the group as they exit, before anyone reaps them.
    const auto deadline = steady_clock::now() + std::chrono::seconds(1);
    while (rmdir(leaf.c_str()) != 0 && errno == EBUSY && steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

bool Cgroups::OomKilled(const std::string& name) const {
  if (!support_.memory) return false;
  const std::string leaf = support_.memory_dir + "/" + name;
  if (support_.version == CgroupSupport::Version::kV2) {
    return Counter(ReadFile(leaf + "/memory.events"), "oom_kill").value_or(0) > 0;
  }
  // v1 counts a kill only in the victim's own group: a container's is nested (RuntimePath).
  const auto kills = [](const std::string& dir) { return Counter(ReadFile(dir + "/memory.oom_control"), "oom_kill"); };
  if (const auto nested = kills(leaf + "/" + kRuntimeGroup); nested.value_or(0) > 0) return true;
  if (const auto own = kills(leaf)) return *own > 0;
  // Kernels before 4.13 do not count kills; hitting the limit is the nearest sign.
  const std::vector<std::string> failcnt = Words(ReadFile(leaf + "/memory.failcnt").value_or(""));
  return !failcnt.empty() && ParseInt(failcnt.front()).value_or(0) > 0;
}

}  // namespace tessera::node
