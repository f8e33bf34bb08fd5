// tessera-supervise: owns one task so that it outlives the agent
// (node/launch/supervisor_protocol.h has the contract).
//
// It is the leader of the task's session; the task is its only child, the
// leader of its own process group. Every signal is blocked and read from a
// signalfd, so forwarding is a plain loop with no handler races: a signal for
// the task goes to its group; SIGCHLD means the task may have exited. When the
// task's leader exits, what it left in its group is SIGKILLed (the task's
// lifetime is its leader's, as without a supervisor), and the exit status is
// written (atomically) before the supervisor exits with the same status.
//
// Deliberately small and statically linked: it is exec'd once per task start,
// and a static binary skips the dynamic loader, so the task's LD_PRELOAD (the
// vGPU shim) and LD_LIBRARY_PATH reach the task without touching the
// supervisor. It allocates nothing.
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "node/launch/launch_failure.h"
#include "node/launch/supervisor_protocol.h"

namespace tessera::node {
namespace {

void Complain(const char* what, const char* where) { fprintf(stderr, "tessera-supervise: %s %s: %s\n", what, where, strerror(errno)); }

// Written to a temporary file and renamed: whoever reads it (the agent, or
// its successor after a crash) sees it absent or complete. Not synced to disk:
// it must outlive the agent, not the node -- a node that loses power loses its
// tasks with their exit files, and the agent reports them lost either way.
bool WriteAtomically(const char* dir, const char* name, const char* text) {
  char path[PATH_MAX], temporary[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s", dir, name) >= static_cast<int>(sizeof path) ||
      snprintf(temporary, sizeof temporary, "%s.tmp", path) >= static_cast<int>(sizeof temporary)) {
    errno = ENAMETOOLONG;
    return false;
  }
  const int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const size_t length = strlen(text);
  const bool written = write(fd, text, length) == static_cast<ssize_t>(length);
  close(fd);
  return written && rename(temporary, path) == 0;
}

int ExitCode(int status) { return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status); }

int Supervise(int argc, char** argv) {
  // The candidates end at the "--" (never a candidate: each holds a '/'),
  // which becomes their terminating null; the task's argv is the rest.
  int separator = 3;
  while (separator < argc && strcmp(argv[separator], kSupervisorArgvSeparator) != 0) ++separator;
  if (argc < 3 || separator == 3 || separator + 1 >= argc) {
    fprintf(stderr, "usage: %s STATE_DIR REPORT_FD CANDIDATE... -- ARGV...\n(started by tessera agent, not by hand)\n", argv[0]);
    return 2;
  }
  const char* state_dir = argv[1];
  const int report_fd = atoi(argv[2]);
  if (report_fd < 3) {
    fprintf(stderr, "tessera-supervise: malformed report descriptor %s\n", argv[2]);
    return 2;
  }
  argv[separator] = nullptr;
  char** search = argv + 3;
  char** task_argv = argv + separator + 1;

  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, nullptr);
  const int signals = signalfd(-1, &all, SFD_CLOEXEC);
  if (signals < 0 || fcntl(report_fd, F_SETFD, FD_CLOEXEC) != 0) ReportLaunchFailure(report_fd, LaunchStep::kSupervisor, errno);

  const pid_t task = fork();
  if (task < 0) ReportLaunchFailure(report_fd, LaunchStep::kSupervisor, errno);
  if (task == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    setpgid(0, 0);
    ReportLaunchFailure(report_fd, LaunchStep::kExec, ExecFirst(search, task_argv, environ));
  }
  setpgid(task, task);  // both sides, so that no signal finds the group missing
  close(report_fd);
  char line[64];
  snprintf(line, sizeof line, "%d %d\n", getpid(), task);
  if (!WriteAtomically(state_dir, kSupervisorPidsFile, line)) Complain("cannot write the pids in", state_dir);

  for (;;) {
    signalfd_siginfo info{};
    if (read(signals, &info, sizeof info) != static_cast<ssize_t>(sizeof info)) {
      if (errno == EINTR) continue;
      Complain("cannot read signals in", state_dir);
      return 1;
    }
    const int sig = static_cast<int>(info.ssi_signo);
    if (sig == SIGCHLD) {
      // Observe the leader's exit without reaping it: its pid, and so the
      // group id, stays taken while the group is killed.
      siginfo_t exited{};
      if (waitid(P_PID, static_cast<id_t>(task), &exited, WEXITED | WNOHANG | WNOWAIT) != 0 || exited.si_pid == 0) continue;
      kill(-task, SIGKILL);
      int status = 0;
      while (waitpid(task, &status, 0) < 0 && errno == EINTR) {
      }
      const int code = ExitCode(status);
      snprintf(line, sizeof line, "%d\n", code);
      if (!WriteAtomically(state_dir, kSupervisorExitFile, line)) Complain("cannot record the task's exit status in", state_dir);
      return code;
    }
    kill(-task, sig == SupervisorKillSignal() ? SIGKILL : sig);
  }
}

}  // namespace
}  // namespace tessera::node

int main(int argc, char** argv) { return tessera::node::Supervise(argc, argv); }
