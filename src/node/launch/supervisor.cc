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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "node/launch/launch_failure.h"
#include "node/launch/supervisor_protocol.h"

namespace tessera::node {
namespace {

void Complain(const std::string& what) { fprintf(stderr, "tessera-supervise: %s: %s\n", what.c_str(), strerror(errno)); }

bool WriteAll(int fd, const std::string& text) {
  return write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

// Written to a temporary file, synced and renamed, then the directory synced:
// after a crash the file is either absent or complete.
bool WriteDurably(const std::string& dir, const char* name, const std::string& text, bool sync) {
  const std::string path = dir + "/" + name;
  const std::string temporary = path + ".tmp";
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool written = WriteAll(fd, text) && (!sync || fsync(fd) == 0);
  close(fd);
  if (!written || rename(temporary.c_str(), path.c_str()) != 0) return false;
  if (!sync) return true;
  const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
  const std::string state_dir = argv[1];
  const int report_fd = atoi(argv[2]);
  const int candidates = atoi(argv[3]);
  if (report_fd < 3 || candidates < 1 || 4 + candidates >= argc) {
    fprintf(stderr, "tessera-supervise: malformed command line\n");
    return 2;
  }
  // The candidates, null-terminated for ExecFirst; the task's argv is the rest.
  std::vector<char*> search(argv + 4, argv + 4 + candidates);
  search.push_back(nullptr);
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
    ReportLaunchFailure(report_fd, LaunchStep::kExec, ExecFirst(search.data(), task_argv, environ));
  }
  setpgid(task, task);  // both sides, so that no signal finds the group missing
  close(report_fd);
  if (!WriteDurably(state_dir, kSupervisorPidsFile, std::to_string(getpid()) + " " + std::to_string(task) + "\n", false)) {
    Complain("cannot write " + state_dir + "/" + kSupervisorPidsFile);
  }

  for (;;) {
    signalfd_siginfo info{};
    if (read(signals, &info, sizeof info) != static_cast<ssize_t>(sizeof info)) {
      if (errno == EINTR) continue;
      Complain("reading signals");
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
      if (!WriteDurably(state_dir, kSupervisorExitFile, std::to_string(code) + "\n", true)) {
        Complain("cannot record the exit status of " + std::string(task_argv[0]) + " in " + state_dir);
      }
      return code;
    }
    kill(-task, sig == SupervisorKillSignal() ? SIGKILL : sig);
  }
}

}  // namespace
}  // namespace tessera::node

int main(int argc, char** argv) { return tessera::node::Supervise(argc, argv); }
