// A task's processes on this node: launched with its environment, working
// directory and log files, in its own process group and (when cgroups allow)
// its own cgroup with CPU and memory limits; signalled, stopped and reaped as
// one.
//
// Launch makes the task's cgroup and sets its limits, then vforks; the child
// joins the cgroup and execs, and Launch returns only once the exec has
// happened or failed. Every failure before the task's own code runs --
// command not found, not executable, working directory or log file
// impossible, cgroup refused -- comes back as a Status naming the step, never
// as an exit code 127 that would look like the task's own. The child reports
// its failing step and errno over a close-on-exec pipe: the parent reads
// either that report or, when exec succeeds, end-of-file.
//
// Between vfork and exec the child borrows the agent's memory, and the agent
// is multi-threaded: it makes system calls only. So everything that allocates
// (PATH candidates, the environment, opening logs, the cgroup and its limits)
// is prepared before vfork; the child joins its cgroup by writing "0" to its
// cgroup.procs files, so the limits hold from the task's first instruction.
// vfork rather than fork because copying the page tables of a large agent
// process (or of `tessera up`, which hosts a server and many agents) was most
// of a launch's cost.
//
// The task is the leader of a new session and process group (setsid), so a
// signal sent to the group reaches everything it spawned, down to grandchildren.
// When the leader exits, whatever it left behind in its group is SIGKILLed: the
// task's lifetime is its leader's. Poll observes the exit without reaping first
// (waitid WNOWAIT), so the leader's pid -- and with it the group id -- cannot be
// recycled while the group is signalled.
//
// Supervised (LaunchSpec::supervisor), the session leader is instead
// tessera-supervise (node/launch/supervisor_protocol.h), and the task its
// child: signals go to the supervisor, which forwards them to the task's group,
// and the exit status is the one it recorded. The task then outlives the
// agent: a later agent Adopts it from its state directory and drives it the
// same way. Poll and Signal go through a pidfd, so a recycled pid is never
// signalled, even for a supervisor that is not our child.
//
// Assumes the agent neither ignores SIGCHLD nor reaps with waitpid(-1): each
// TaskProcess reaps its own leader. Not thread-safe; one owner drives it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "node/launch/cgroups.h"

namespace tessera::node {

struct LaunchSpec {
  std::vector<std::string> argv;           // argv[0] resolved through PATH (execvp semantics)
  std::map<std::string, std::string> env;  // added to (and overriding) the agent's environment;
                                           // its PATH, if any, is the one searched
  std::string working_dir;                 // created if missing; "" keeps the agent's
  // How the task's stdin, stdout and stderr are connected:
  //   kLogs: stdin is /dev/null; stdout and stderr are appended to the files
  //     below (created 0644, parent directories too; relative paths are
  //     relative to the agent's directory; "" discards the stream);
  //   kTerminal: all three are a new pseudo-terminal, the task's controlling
  //     terminal, of `rows` x `cols`; the agent holds its other end (terminal());
  //   kPipes: three pipes, whose other ends the agent holds (input(), output(), error()).
  enum class Stdio { kLogs, kTerminal, kPipes };
  Stdio stdio = Stdio::kLogs;
  std::string stdout_path, stderr_path;
  std::uint16_t rows = 24, cols = 80;
  std::int64_t cpu_milli = 0;     // 0: no CPU limit
  std::int64_t memory_bytes = 0;  // 0: no memory limit
  // Leaf name for the task's cgroup, e.g. "job-12-task-3-a0"; "" runs the task
  // in the agent's cgroup, without limits.
  std::string cgroup_name;
  // Instead: the cgroup.procs files of a running task's group to join
  // (Cgroups::ProcsFiles), for a process started beside it (`tessera exec`).
  std::vector<std::string> join_cgroup;
  // Under a supervisor: the path of tessera-supervise, and the task's state
  // directory (created). Stdio::kLogs only: a terminal's or a pipe's other end
  // lives in the agent, so such a task cannot outlive it.
  std::string supervisor;
  std::string state_dir;
};

class TaskProcess {
 public:
  // Starts the task. With `cgroups` null or unsupported (or no cgroup_name) it
  // runs without limits; a controller the machine lacks is skipped likewise
  // (Cgroups::Describe has said so in the agent's log).
  static Result<std::unique_ptr<TaskProcess>> Launch(const LaunchSpec& spec, Cgroups* cgroups);
  // The supervised task whose supervisor, still running, keeps `state_dir`
  // (an earlier agent's Launch); `cgroup` is the name it was launched with.
  // NotFound when no live supervisor keeps it: see RecordedExit.
  static Result<std::unique_ptr<TaskProcess>> Adopt(const std::string& state_dir, std::string cgroup);
  // The exit status a supervisor recorded in `state_dir`, if it did.
  static std::optional<int> RecordedExit(const std::string& state_dir);
  // Whether a supervisor still runs in `state_dir` without a recorded exit:
  // its task, orphaned, is SIGKILLed (the supervisor first, so it records
  // nothing). For the leftovers of an agent that cannot adopt them.
  static void KillSupervised(const std::string& state_dir);

  // A task still running is killed (SIGKILL to its group) and reaped: this may
  // block while a process sits in uninterruptible sleep. Not once Detached.
  ~TaskProcess();
  TaskProcess(const TaskProcess&) = delete;
  TaskProcess& operator=(const TaskProcess&) = delete;

  pid_t pid() const { return pid_; }
  // The cgroup the task was placed in, "" when none: pass it to
  // Cgroups::OomKilled and then Cgroups::Remove once Poll has returned.
  const std::string& cgroup() const { return cgroup_; }

  // Non-blocking: the exit status once the leader has exited and been reaped.
  // The exit code for a normal exit, 128+signal when killed by a signal.
  std::optional<int> Poll();
  // Supervised: after Poll, whether the supervisor died without recording the
  // task's exit (killed itself); its task was then killed, and the status is
  // the supervisor's.
  bool supervisor_lost() const { return supervisor_lost_; }
  bool supervised() const { return !state_dir_.empty(); }
  // Leaves a supervised task running when this object goes (the agent exits
  // and a later one adopts it). Nothing for a task without a supervisor.
  void Detach();

  // SIGTERM (and SIGCONT, so a stopped task sees it) to the whole group now.
  // Asynchronous: keep calling Poll, and KillIfOverdue, which sends SIGKILL to
  // the group once `grace` has passed. A second call can only shorten the grace.
  void Terminate(std::chrono::milliseconds grace);
  // The checkpoint contract (docs/fault-tolerance.md): `checkpoint_signal` to
  // the group now, and Terminate(grace) once `checkpoint_grace` has passed if
  // the task is still there. A checkpoint signal of SIGTERM is Terminate with
  // the two graces added.
  void CheckpointThenTerminate(int checkpoint_signal, std::chrono::milliseconds checkpoint_grace, std::chrono::milliseconds grace);
  // The checkpoint that signal asked for is written: the checkpoint grace ends
  // now, so the next KillIfOverdue sends SIGTERM. Nothing outside that grace.
  void CheckpointTaken();
  // Call periodically: sends what a grace that has run out calls for (SIGTERM
  // after a checkpoint grace, SIGKILL after Terminate's); otherwise nothing.
  void KillIfOverdue();

  // Sends `sig` to the whole group (checkpoint signals); nothing once reaped.
  void Signal(int sig);

  // The agent's ends of the task's stdio, -1 where the spec asked for none:
  // the terminal's master side (Stdio::kTerminal), or the pipes (Stdio::kPipes).
  // They stay open until the TaskProcess is destroyed, except the input,
  // which CloseInput closes (end of input for the task).
  int terminal() const { return terminal_; }
  int input() const { return input_; }
  int output() const { return output_; }
  int error() const { return error_; }
  void CloseInput();

 private:
  TaskProcess(pid_t pid, std::string cgroup) : pid_(pid), cgroup_(std::move(cgroup)) {}
  std::optional<int> PollSupervisor();

  int terminal_ = -1, input_ = -1, output_ = -1, error_ = -1;
  pid_t pid_;
  std::string cgroup_;
  std::optional<int> exit_status_;  // set when reaped
  std::optional<std::chrono::steady_clock::time_point> kill_at_;  // set by Terminate
  std::optional<std::chrono::steady_clock::time_point> term_at_;  // set by CheckpointThenTerminate
  std::chrono::milliseconds term_grace_{0};
  // Supervised only: a pidfd of the supervisor, its state directory, whether
  // we launched it (and so reap it).
  int pidfd_ = -1;
  std::string state_dir_;
  bool own_child_ = true;
  bool detached_ = false;
  bool supervisor_lost_ = false;
};

}  // namespace tessera::node
