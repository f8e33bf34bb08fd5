// The contract between the agent and `tessera-supervise`, the small process
// that owns one task (as conmon, containerd's shim and slurmstepd do), so that
// the task outlives the agent: the agent may crash, be killed or be upgraded,
// and the next agent re-adopts the task from its state directory.
//
// Command line: tessera-supervise STATE_DIR REPORT_FD CANDIDATE... -- ARGV...
//   started by the launcher's child already in the task's session, cgroup,
//   working directory and stdio, with the task's environment; CANDIDATEs are
//   the paths execvp would try for ARGV[0].
// State directory, written by the supervisor:
//   pids  "SUPERVISOR_PID TASK_PID\n" once the task is forked;
//   exit  the task's exit status ("CODE\n": 128+signal when killed), written
//         atomically (rename) before the supervisor exits; it outlives the
//         agent, not the node (a node crash takes its tasks with it).
// Signals to the supervisor are forwarded to the task's process group, except
// KillSignal(), which SIGKILLs it (SIGKILL itself cannot be caught).
#pragma once

#include <signal.h>

namespace tessera::node {

inline constexpr const char* kSupervisorBinary = "tessera-supervise";
inline constexpr const char* kSupervisorPidsFile = "pids";
inline constexpr const char* kSupervisorExitFile = "exit";
inline constexpr const char* kSupervisorArgvSeparator = "--";

inline int SupervisorKillSignal() { return SIGRTMAX; }

}  // namespace tessera::node
