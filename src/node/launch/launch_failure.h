// What the agent's launcher and the task's supervisor share about starting a
// task's program: the report a child writes when it fails before the task's
// own code runs, and execvp's search over candidates prepared in advance.
// Header-only and libc-only, so the supervisor binary stays small.
#pragma once

#include <errno.h>
#include <unistd.h>

namespace tessera::node {

// The step that failed, reported over a close-on-exec pipe; end-of-file on the
// pipe means the exec succeeded.
enum class LaunchStep : int { kSession, kCgroup, kStdio, kWorkingDir, kExec, kSupervisor };
struct LaunchFailure {
  LaunchStep step;
  int err;
  int index;  // kCgroup: which of the cgroup.procs files
};

[[noreturn]] inline void ReportLaunchFailure(int report_fd, LaunchStep step, int err, int index = 0) {
  const LaunchFailure report{step, err, index};
  // A failed write leaves the parent seeing end-of-file and, later, exit 127.
  [[maybe_unused]] const ssize_t written = write(report_fd, &report, sizeof report);
  _exit(127);
}

// execvp's search over `candidates` (null-terminated, in PATH order): returns
// only on failure, with the errno to report. As execvp: EACCES is remembered
// and the search goes on; anything but "not here" stops it.
inline int ExecFirst(char* const* candidates, char* const* argv, char* const* envp) {
  int err = ENOENT;
  for (; *candidates != nullptr; ++candidates) {
    execve(*candidates, argv, envp);
    if (errno == EACCES) {
      err = EACCES;
    } else if (errno != ENOENT && errno != ENOTDIR) {
      return errno;
    }
  }
  return err;
}

}  // namespace tessera::node
