// tessera-supervise: owns one task so that it outlives the agent
// (node/launch/supervisor_protocol.h has the contract).
//
// It is the leader of the task's session; the task is its only child, the
// leader of its own process group. Every signal is blocked and read from a
// signalfd, so forwarding is a plain loop with no handler races: a signal for
// the task goes to its group; SIGCHLD means the task may have exited. When the
// task's leader exits, what it left in its group is SIGKILLed (the task's
// lifetime is its leader's, as without a supervisor), and the exit status is
// written durably before the supervisor exits with the same status.
//
// Deliberately libc only and small: it is exec'd once per task start.
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

// No C++ library here (no std::string): loading libstdc++ would cost each
// task start about as much as the rest of the supervisor.
void Complain(const char* what, const char* where) { fprintf(stderr, "tessera-supervise: %s %s: %s\n", what, where, strerror(errno)); }

// Written to a temporary file, synced and renamed, then the directory synced:
// after a crash the file is either absent or complete.
bool WriteDurably(const char* dir, const char* name, const char* text, bool sync) {
  char path[PATH_MAX], temporary[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s", dir, name) >= static_cast<int>(sizeof path) ||
      snprintf(temporary, sizeof temporary, "%s.tmp", path) >= static_cast<int>(sizeof temporary)) {
    errno = ENAMETOOLONG;
    return false;
  }
  const int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const size_t length = strlen(text);
  const bool written = write(fd, text, length) == static_cast<ssize_t>(length) && (!sync || fsync(fd) == 0);
  close(fd);
  if (!written || rename(temporary, path) != 0) return false;
  if (!sync) return true;
  const int dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return false;
  const bool synced = fsync(dir_fd) == 0;
  close(dir_fd);
  return synced;
}

int ExitCode(int status) { return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status); }

int Supervise(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: %s STATE_DIR REPORT_FD N CANDIDATE... ARGV...\n(started by tessera agent, not by hand)\n", argv[0]);
    return 2;
  }
  const char* state_dir = argv[1];
  const int report_fd = atoi(argv[2]);
  const int candidates = atoi(argv[3]);
  if (report_fd < 3 || candidates < 1 || 4 + candidates >= argc) {
    fprintf(stderr, "tessera-supervise: malformed command line\n");
    return 2;
  }
  // The candidates, null-terminated for ExecFirst; the task's argv is the rest.
  char** search = static_cast<char**>(calloc(static_cast<size_t>(candidates) + 1, sizeof(char*)));
  if (search == nullptr) ReportLaunchFailure(report_fd, LaunchStep::kSupervisor, errno);
  memcpy(search, argv + 4, static_cast<size_t>(candidates) * sizeof(char*));
  char** task_argv = argv + 4 + candidates;

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
  if (!WriteDurably(state_dir, kSupervisorPidsFile, line, false)) Complain("cannot write the pids in", state_dir);

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
      if (!WriteDurably(state_dir, kSupervisorExitFile, line, true)) Complain("cannot record the task's exit status in", state_dir);
      return code;
    }
    kill(-task, sig == SupervisorKillSignal() ? SIGKILL : sig);
  }
}

}  // namespace
}  // namespace tessera::node

int main(int argc, char** argv) { return tessera::node::Supervise(argc, argv); }
