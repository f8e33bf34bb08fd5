// Container tasks through runc: a bundle per task, run in the foreground.
//
// Prepare mounts the task's root -- an overlay with the image's unpacked
// rootfs below and a writable layer of the task's own above, so the image
// stays read-only and shared while each task may write -- writes runc's
// config.json beside it (oci_config.h) and returns the command that runs it:
// `runc run --keep`, in the foreground. That command is launched as the task's own
// (under tessera-supervise, in the task's cgroup, with its logs): runc creates
// the container, forwards every signal it gets to the container's first
// process, and exits with that process's status. So a container task is
// driven, adopted and reaped like a host process.
//
// One thing differs, and the caller does it: once the task has ended,
// Remove deletes the container (--keep left it, so that its cgroup can still
// be read) and unmounts its root. SIGKILL cannot be forwarded: the task's
// SIGKILL kills runc and whatever of the container shares its process
// group; Remove's `runc delete --force` kills anything left.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "node/container/oci_config.h"

namespace tessera::node {

struct RuncOptions {
  std::string runc = "runc";  // searched on PATH without a '/'
  std::string state_root;     // runc --root: where runc keeps its containers' state
};

class RuncRuntime {
 public:
  explicit RuncRuntime(RuncOptions options) : options_(std::move(options)) {}

  // The bundle of container `id` in `task_dir` (created): rootfs/ (the overlay
  // over `image_rootfs`, with upper/ and work/ beside it) and config.json from
  // `spec` (its rootfs is set here). Returns the argv to launch as the task.
  Result<std::vector<std::string>> Prepare(const std::string& id, const std::string& task_dir,
                                           const std::string& image_rootfs, ContainerSpec spec) const;
  // The command that runs `command` in running container `id` (`runc exec`),
  // with a terminal of its own when `tty` (then the caller's stdio is one).
  std::vector<std::string> Exec(const std::string& id, bool tty, const std::vector<std::string>& command) const;
  // What Prepare and runc left for a task that has ended: runc's state
  // (`runc delete --force`, which also kills anything left) and the mounted
  // root. Safe to call for a task that never started.
  void Remove(const std::string& id, const std::string& task_dir) const;

 private:
  std::vector<std::string> Runc(std::vector<std::string> args) const;

  RuncOptions options_;
};

}  // namespace tessera::node
