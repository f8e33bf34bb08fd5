// The OCI runtime configuration (`config.json`, runtime-spec 1.0) that runc
// runs one container task from: a pure function of what the task asks for.
//
// What every container gets, whatever its image says: its own mount, pid, ipc
// and uts namespaces (and net, unless it shares the host's: NCCL and RDMA
// need the host network, so that is the default); the task's cgroup, made and
// limited by the agent before runc starts (cgroupsPath only joins it);
// no-new-privileges; Docker's default capability set, trimmed further for a
// task that does not run as root; Docker's list of blocked system calls; the
// kernel's sensitive /proc and /sys paths masked or read-only; /dev/shm of
// the size asked (NCCL needs far more than the 64 MiB default). Resource
// limits are inherited from the agent, as a host-process task's are.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera::node {

struct BindMount {
  std::string source;       // a path on the node
  std::string destination;  // where it appears in the container
  bool read_only = true;
};

// A device node the container sees (a GPU's /dev/nvidiaN, from CDI edits).
struct DeviceNode {
  std::string path;       // in the container
  char type = 'c';        // 'c' or 'b'
  std::int64_t major = 0, minor = 0;
  std::uint32_t file_mode = 0666;
};

// An OCI hook (runtime-spec config.md, "POSIX-platform Hooks"), as CDI specs
// give them: nvidia-ctk's refresh of the container's linker cache, say.
struct OciHook {
  std::string stage;  // "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"
  std::string path;
  std::vector<std::string> args;
  std::vector<std::string> env;
  std::optional<int> timeout_s;
};

struct ContainerSpec {
  std::string rootfs;         // the container's root directory on the node
  bool read_only_rootfs = false;
  std::vector<std::string> args;
  std::vector<std::string> env;  // "NAME=value"
  std::string cwd = "/";
  std::uint32_t uid = 0, gid = 0;
  std::string hostname;
  std::vector<BindMount> mounts;
  std::vector<DeviceNode> devices;
  std::vector<OciHook> hooks;
  std::int64_t shm_bytes = 64 << 20;
  // The host's network namespace (the default), or the network namespace at
  // `network_namespace` (a path under /run/netns); empty: a new, empty one.
  bool host_network = true;
  std::string network_namespace;
  // The task's cgroup, relative to the hierarchy's root ("/tessera/job3-task0-a1");
  // empty: runc picks one.
  std::string cgroups_path;
};

nlohmann::json OciRuntimeConfig(const ContainerSpec& spec);

}  // namespace tessera::node
