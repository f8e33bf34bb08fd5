#include "node/container/oci_config.h"

#include <array>

namespace tessera::node {
namespace {

using nlohmann::json;

// Docker's default capabilities (moby's oci/caps/defaults.go): what a
// container's root may do without reaching outside it.
constexpr std::array kDefaultCapabilities = {
    "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID",       "CAP_FOWNER",     "CAP_MKNOD",
    "CAP_NET_RAW", "CAP_SETGID",     "CAP_SETUID",       "CAP_SETFCAP",    "CAP_SETPCAP",
    "CAP_NET_BIND_SERVICE",          "CAP_SYS_CHROOT",   "CAP_KILL",       "CAP_AUDIT_WRITE",
};

// The system calls Docker's default seccomp profile refuses (its documentation,
// "Significant syscalls blocked by the default profile"): loading kernel
// modules, rebooting, changing the clock, reaching other namespaces, tracing
// and keyrings. Refused with EPERM, as Docker does. Not refused: the NUMA
// calls (mbind, get_mempolicy, set_mempolicy, move_pages), which NCCL and
// libnuma need to place buffers beside their GPU.
constexpr std::array kBlockedSyscalls = {
    "acct", "add_key", "bpf", "clock_adjtime", "clock_settime", "create_module", "delete_module",
    "finit_module", "get_kernel_syms", "init_module", "ioperm", "iopl", "kcmp", "kexec_file_load",
    "kexec_load", "keyctl", "lookup_dcookie", "mount", "nfsservctl", "open_by_handle_at",
    "perf_event_open", "pivot_root", "process_vm_readv", "process_vm_writev", "ptrace",
    "query_module", "quotactl", "reboot", "request_key", "setns", "settimeofday", "stime",
    "swapoff", "swapon", "sysfs", "_sysctl", "umount", "umount2", "unshare", "uselib",
    "userfaultfd", "ustat", "vm86", "vm86old",
};

// What runc's own `runc spec` masks and makes read-only.
constexpr std::array kMaskedPaths = {
    "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
    "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware",
};
constexpr std::array kReadonlyPaths = {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"};

json Mount(const std::string& destination, const std::string& type, const std::string& source, json options) {
  return {{"destination", destination}, {"type", type}, {"source", source}, {"options", std::move(options)}};
}

json StandardMounts(std::int64_t shm_bytes) {
  return json::array({
      Mount("/proc", "proc", "proc", json::array()),
      Mount("/dev", "tmpfs", "tmpfs", {"nosuid", "strictatime", "mode=755", "size=65536k"}),
      Mount("/dev/pts", "devpts", "devpts", {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}),
      Mount("/dev/shm", "tmpfs", "shm", {"nosuid", "noexec", "nodev", "mode=1777", "size=" + std::to_string(shm_bytes)}),
      Mount("/dev/mqueue", "mqueue", "mqueue", {"nosuid", "noexec", "nodev"}),
      Mount("/sys", "sysfs", "sysfs", {"nosuid", "noexec", "nodev", "ro"}),
      Mount("/sys/fs/cgroup", "cgroup", "cgroup", {"nosuid", "noexec", "nodev", "relatime", "ro"}),
  });
}

json Capabilities(std::uint32_t uid) {
  // A task that is not root keeps none: with no-new-privileges nothing it
  // execs could regain them, and it has no use for root's.
  json set = json::array();
  if (uid == 0) {
    for (const char* cap : kDefaultCapabilities) set.push_back(cap);
  }
  return {{"bounding", set}, {"effective", set}, {"permitted", set}};
}

json Seccomp() {
  json names = json::array();
  for (const char* name : kBlockedSyscalls) names.push_back(name);
  return {{"defaultAction", "SCMP_ACT_ALLOW"},
          {"architectures", {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM"}},
          {"syscalls", json::array({{{"names", names}, {"action", "SCMP_ACT_ERRNO"}, {"errnoRet", 1}}})}};
}

json Hooks(const std::vector<OciHook>& hooks) {
  json out = json::object();
  for (const OciHook& h : hooks) {
    json hook = {{"path", h.path}};
    if (!h.args.empty()) hook["args"] = h.args;
    if (!h.env.empty()) hook["env"] = h.env;
    if (h.timeout_s) hook["timeout"] = *h.timeout_s;
    out[h.stage].push_back(std::move(hook));
  }
  return out;
}

}  // namespace

json OciRuntimeConfig(const ContainerSpec& spec) {
  json mounts = StandardMounts(spec.shm_bytes);
  for (const BindMount& m : spec.mounts) {
    json options = {"rbind", "nosuid", "nodev"};
    options.push_back(m.read_only ? "ro" : "rw");
    mounts.push_back(Mount(m.destination, "bind", m.source, std::move(options)));
  }

  json namespaces = json::array({{{"type", "pid"}}, {{"type", "ipc"}}, {{"type", "uts"}}, {{"type", "mount"}}});
  if (!spec.host_network) {
    json net = {{"type", "network"}};
    if (!spec.network_namespace.empty()) net["path"] = spec.network_namespace;
    namespaces.push_back(std::move(net));
  }

  json devices = json::array();
  json allowed = json::array({{{"allow", false}, {"access", "rwm"}}});
  for (const DeviceNode& d : spec.devices) {
    const std::string type(1, d.type);
    devices.push_back({{"path", d.path}, {"type", type}, {"major", d.major}, {"minor", d.minor}, {"fileMode", d.file_mode}, {"uid", 0}, {"gid", 0}});
    allowed.push_back({{"allow", true}, {"type", type}, {"major", d.major}, {"minor", d.minor}, {"access", "rwm"}});
  }

  json linux = {{"namespaces", std::move(namespaces)},
                {"devices", std::move(devices)},
                {"resources", {{"devices", std::move(allowed)}}},
                {"maskedPaths", kMaskedPaths},
                {"readonlyPaths", kReadonlyPaths},
                {"seccomp", Seccomp()}};
  if (!spec.cgroups_path.empty()) linux["cgroupsPath"] = spec.cgroups_path;

  return {
      {"ociVersion", "1.0.2"},
      {"process",
       {{"terminal", false},
        {"user", {{"uid", spec.uid}, {"gid", spec.gid}}},
        {"args", spec.args},
        {"env", spec.env},
        {"cwd", spec.cwd.empty() ? "/" : spec.cwd},
        {"capabilities", Capabilities(spec.uid)},
        {"noNewPrivileges", true}}},
      {"root", {{"path", spec.rootfs}, {"readonly", spec.read_only_rootfs}}},
      {"hostname", spec.hostname},
      {"mounts", std::move(mounts)},
      {"hooks", Hooks(spec.hooks)},
      {"linux", std::move(linux)},
  };
}

}  // namespace tessera::node
