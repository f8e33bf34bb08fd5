#include "node/container/runc_runtime.h"

#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "node/image/command.h"

namespace tessera::node {
namespace {

namespace fs = std::filesystem;

constexpr std::chrono::seconds kRuncTimeout{30};

}  // namespace

std::vector<std::string> RuncRuntime::Runc(std::vector<std::string> args) const {
  std::vector<std::string> argv = {options_.runc};
  if (!options_.state_root.empty()) argv.insert(argv.end(), {"--root", options_.state_root});
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

Result<std::vector<std::string>> RuncRuntime::Prepare(const std::string& id, const std::string& task_dir,
                                                      const std::string& image_rootfs, ContainerSpec spec) const {
  const std::string context = "container " + id + ": ";
  // overlayfs separates its options with ',' and its lower layers with ':'.
  for (const std::string& path : {task_dir, image_rootfs}) {
    if (path.find_first_of(",:") != std::string::npos) return InvalidArgument(context + "a path with ',' or ':' cannot be an overlay layer: " + path);
  }
  const fs::path dir(task_dir);
  std::error_code ec;
  for (const char* sub : {"rootfs", "upper", "work"}) {
    fs::create_directories(dir / sub, ec);
    if (ec) return FailedPrecondition(context + "cannot create " + (dir / sub).string() + ": " + ec.message());
  }
  const std::string rootfs = (dir / "rootfs").string();
  const std::string layers = "lowerdir=" + image_rootfs + ",upperdir=" + (dir / "upper").string() + ",workdir=" + (dir / "work").string();
  if (mount("overlay", rootfs.c_str(), "overlay", 0, layers.c_str()) != 0) {
    return FailedPrecondition(context + "cannot mount the task's root (overlay over " + image_rootfs + "): " + std::strerror(errno) +
                              (errno == EPERM ? " (the agent must run as root to run containers)" : ""));
  }
  spec.rootfs = rootfs;
  std::ofstream config(dir / "config.json", std::ios::trunc);
  config << OciRuntimeConfig(spec).dump();
  config.close();
  if (!config) {
    umount2(rootfs.c_str(), MNT_DETACH);
    return FailedPrecondition(context + "cannot write " + (dir / "config.json").string());
  }
  // --keep: the container's state and cgroups stay until Remove, so that the
  // agent can still read why it ended (an OOM kill is counted in its cgroup).
  return Runc({"run", "--keep", "--bundle", task_dir, id});
}

std::vector<std::string> RuncRuntime::Exec(const std::string& id, bool tty, const std::vector<std::string>& command) const {
  std::vector<std::string> args = {"exec"};
  if (tty) args.push_back("--tty");
  args.push_back(id);
  args.insert(args.end(), command.begin(), command.end());
  return Runc(std::move(args));
}

void RuncRuntime::Remove(const std::string& id, const std::string& task_dir) const {
  // Best effort, and each step whatever the last did: a container that never
  // started has no runc state, a root never mounted nothing to unmount.
  (void)RunCommand({Runc({"delete", "--force", id}), kRuncTimeout});
  umount2((fs::path(task_dir) / "rootfs").c_str(), MNT_DETACH);
}

}  // namespace tessera::node
