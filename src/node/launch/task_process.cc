#include "node/launch/task_process.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include "node/launch/launch_failure.h"
#include "node/launch/supervisor_protocol.h"

namespace tessera::node {
namespace {

std::string ErrnoText(int err) { return std::error_code(err, std::generic_category()).message(); }

Status WithContext(const std::string& context, const Status& status) {
  return {status.code(), context + status.message()};
}

// A file descriptor, closed when it goes out of scope.
class Fd {
 public:
  Fd() = default;
  // Takes `fd`, moved above 2 so that dup2 onto stdin/stdout/stderr never clobbers it.
  explicit Fd(int fd) : fd_(fd >= 0 && fd <= 2 ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : fd) {
    if (fd != fd_ && fd >= 0) close(fd);
  }
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      Close();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~Fd() { Close(); }

  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }
  int Release() { return std::exchange(fd_, -1); }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// A close-on-exec pipe: the child's failure report travels on it, and the
// task's stdio with Stdio::kPipes.
struct Pipe {
  Fd read, write;
};
std::optional<Pipe> MakePipe() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  Pipe pipe{Fd(fds[0]), Fd(fds[1])};
  if (!pipe.read.ok() || !pipe.write.ok()) return std::nullopt;
  return pipe;
}

Result<Fd> OpenLog(const std::string& path, const std::string& stream) {
  if (path.empty()) return Fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
  std::error_code ec;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  Fd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (!fd.ok()) {
    const std::string why = ec ? ec.message() : ErrnoText(errno);
    return FailedPrecondition("cannot open the " + stream + " log " + path + ": " + why);
  }
  return fd;
}

// The child's ends of its stdio, and the agent's (LaunchSpec::Stdio).
struct StdioEnds {
  Fd in, out, err;                        // the child's; out and err unset with a terminal
  Fd terminal, agent_in, agent_out, agent_err;  // the agent's
  std::string terminal_path;              // the terminal's device, for the child to open
};

// Out of line, as is ReleaseEnds: moving descriptors about inside Launch,
// which vforks, would leave the compiler fearing they are clobbered.
[[gnu::noinline]] Result<StdioEnds> OpenStdio(const LaunchSpec& spec) {
  StdioEnds ends;
  switch (spec.stdio) {
    case LaunchSpec::Stdio::kLogs: {
      ends.in = Fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
      Result<Fd> out = OpenLog(spec.stdout_path, "stdout");
      if (!out.ok()) return out.status();
      Result<Fd> err = OpenLog(spec.stderr_path, "stderr");
      if (!err.ok()) return err.status();
      ends.out = std::move(*out);
      ends.err = std::move(*err);
      break;
    }
    case LaunchSpec::Stdio::kTerminal: {
      ends.terminal = Fd(posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
      char name[128] = {};
      if (!ends.terminal.ok() || grantpt(ends.terminal.get()) != 0 || unlockpt(ends.terminal.get()) != 0 ||
          ptsname_r(ends.terminal.get(), name, sizeof name) != 0) {
        return Internal("cannot create a terminal: " + ErrnoText(errno));
      }
      ends.terminal_path = name;
      const winsize size{spec.rows, spec.cols, 0, 0};
      ioctl(ends.terminal.get(), TIOCSWINSZ, &size);
      // The plan's descriptors are unused with a terminal, but must be valid numbers.
      ends.in = Fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
      break;
    }
    case LaunchSpec::Stdio::kPipes: {
      std::optional<Pipe> in = MakePipe(), out = MakePipe(), err = MakePipe();
      if (!in || !out || !err) return Internal("cannot create pipes: " + ErrnoText(errno));
      ends.in = std::move(in->read);
      ends.agent_in = std::move(in->write);
      ends.out = std::move(out->write);
      ends.agent_out = std::move(out->read);
      ends.err = std::move(err->write);
      ends.agent_err = std::move(err->read);
      break;
    }
  }
  return ends;
}

// The agent's ends: terminal, input, output, error.
[[gnu::noinline]] std::array<int, 4> ReleaseEnds(StdioEnds& ends) {
  return {ends.terminal.Release(), ends.agent_in.Release(), ends.agent_out.Release(), ends.agent_err.Release()};
}

// execvp's search, done ahead: the paths to try, in order.
std::vector<std::string> ExecCandidates(const std::string& command, std::string_view path) {
  if (command.find('/') != std::string::npos) return {command};
  std::vector<std::string> candidates;
  for (std::size_t start = 0;;) {
    const std::size_t end = path.find(':', start);
    const std::string_view dir = path.substr(start, end - start);
    // An empty entry is the current directory, as for execvp.
    candidates.push_back(dir.empty() ? command : std::string(dir) + "/" + command);
    if (end == std::string_view::npos) return candidates;
    start = end + 1;
  }
}

std::vector<char*> NullTerminated(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Everything the child needs, prepared before vfork so that it need not allocate.
struct ChildPlan {
  int report_fd, stdin_fd, stdout_fd, stderr_fd;
  const char* terminal;     // a terminal's device to open as stdio instead; nullptr: none
  const char* working_dir;  // nullptr: stay in the agent's
  std::vector<char*> join;  // cgroup.procs files to write "0" to, then nullptr
  std::vector<char*> candidates, argv, envp;
  // Supervised: the supervisor to exec instead, with its argv (which holds
  // the candidates and the task's argv); nullptr: none.
  const char* supervisor;
  std::vector<char*> supervisor_argv;
};

[[noreturn]] void Fail(const ChildPlan& plan, LaunchStep step, int err, int index = 0) {
  ReportLaunchFailure(plan.report_fd, step, err, index);
}

// The child between vfork and exec: it borrows the agent's memory while the
// calling thread waits, so system calls only -- no allocation, nothing that
// takes a lock or changes the agent's data.
[[noreturn]] void RunChild(const ChildPlan& plan) {
  // Handlers and the signal mask (all blocked by the parent around vfork) go
  // back to their defaults: no agent handler may run here, and the task starts
  // clean (ignored signals and the mask would survive exec). The child has its
  // own copy of the handler table: the agent's is untouched.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &default_action, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);

  if (setsid() < 0) Fail(plan, LaunchStep::kSession, errno);
  for (int i = 0; plan.join[i] != nullptr; ++i) {
    const int fd = open(plan.join[i], O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "0", 1) != 1) Fail(plan, LaunchStep::kCgroup, errno, i);
    close(fd);
  }
  int in = plan.stdin_fd, out = plan.stdout_fd, error_out = plan.stderr_fd;
  if (plan.terminal != nullptr) {
    // Opened by the leader of a new session, the terminal becomes its
    // controlling terminal (TIOCSCTTY says so explicitly): ^C and a hang-up
    // reach the task's foreground processes.
    const int tty = open(plan.terminal, O_RDWR);
    if (tty < 0 || ioctl(tty, TIOCSCTTY, 0) != 0) Fail(plan, LaunchStep::kStdio, errno);
    in = out = error_out = tty;
  }
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(error_out, 2) < 0) {
    Fail(plan, LaunchStep::kStdio, errno);
  }
  if (plan.working_dir != nullptr && chdir(plan.working_dir) != 0) {
    Fail(plan, LaunchStep::kWorkingDir, errno);
  }
  // No agent descriptor reaches the task, whether or not it was opened close-on-exec
  // (best effort: needs Linux 5.11).
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);

  if (plan.supervisor != nullptr) {
    // The supervisor reports the task's exec on the same pipe: it must survive this exec.
    if (fcntl(plan.report_fd, F_SETFD, 0) != 0) Fail(plan, LaunchStep::kSupervisor, errno);
    execve(plan.supervisor, plan.supervisor_argv.data(), plan.envp.data());
    Fail(plan, LaunchStep::kSupervisor, errno);
  }
  Fail(plan, LaunchStep::kExec, ExecFirst(plan.candidates.data(), plan.argv.data(), plan.envp.data()));
}

Status Explain(const LaunchFailure& report, const LaunchSpec& spec, const std::string& path,
               const std::vector<std::string>& join) {
  const std::string& command = spec.argv[0];
  const std::string context = "launching " + command + ": ";
  const std::string error = ErrnoText(report.err);
  switch (report.step) {
    case LaunchStep::kSession:
      return Internal(context + "setsid: " + error);
    case LaunchStep::kCgroup:
      return FailedPrecondition(context + "cannot join cgroup " + join[report.index] + ": " + error);
    case LaunchStep::kStdio:
      return Internal(context + "redirecting stdin/stdout/stderr: " + error);
    case LaunchStep::kWorkingDir:
      return FailedPrecondition(context + "cannot enter working directory " + spec.working_dir +
                                ": " + error);
    case LaunchStep::kSupervisor:
      return FailedPrecondition(context + "cannot start the task's supervisor " + spec.supervisor + ": " + error);
    case LaunchStep::kExec:
      break;
  }
  if (report.err == ENOENT) {
    return NotFound(command.find('/') == std::string::npos
                        ? "command not found: " + command + " (searched PATH=" + path + ")"
                        : context + "no such file (or its #! interpreter is missing)");
  }
  const std::string why = report.err == EACCES    ? "permission denied (not an executable file?)"
                          : report.err == ENOEXEC ? "not an executable format (a script needs #!)"
                                                  : error;
  return FailedPrecondition(context + why);
}

void Reap(pid_t pid, int* status) {
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
}

// pidfds through syscall(2): Debian 12's <sys/pidfd.h> (glibc 2.36) declares
// its wrappers without C linkage, so C++ cannot link them.
int PidfdOpen(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }
int PidfdSignal(int pidfd, int sig) { return static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0)); }

std::string StateFile(const std::string& state_dir, const char* name) { return (std::filesystem::path(state_dir) / name).string(); }

// The supervisor's and its task's pids, from the state directory.
std::optional<std::pair<pid_t, pid_t>> ReadPids(const std::string& state_dir) {
  std::ifstream in(StateFile(state_dir, kSupervisorPidsFile));
  pid_t supervisor = 0, task = 0;
  if (!(in >> supervisor >> task) || supervisor <= 0 || task <= 0) return std::nullopt;
  return std::pair{supervisor, task};
}

// Whether the process `pidfd` names is the supervisor of `state_dir`: its
// command line says so, and it was still running after we read that.
bool IsSupervisorOf(int pidfd, pid_t pid, const std::string& state_dir) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string program, dir;
  if (!std::getline(in, program, '\0') || !std::getline(in, dir, '\0')) return false;
  if (std::filesystem::path(program).filename() != kSupervisorBinary || dir != state_dir) return false;
  pollfd exited{pidfd, POLLIN, 0};
  return poll(&exited, 1, 0) == 0;
}

}  // namespace

Result<std::unique_ptr<TaskProcess>> TaskProcess::Launch(const LaunchSpec& spec, Cgroups* cgroups) {
  if (spec.argv.empty() || spec.argv[0].empty()) {
    return InvalidArgument("cannot launch a task without a command (argv[0] is empty)");
  }
  const std::string context = "launching " + spec.argv[0] + ": ";
  const bool supervised = !spec.supervisor.empty();
  if (supervised && (spec.stdio != LaunchSpec::Stdio::kLogs || spec.state_dir.empty())) {
    return InvalidArgument(context + "a supervised task writes its output to logs and needs a state directory");
  }
  if (supervised) {
    std::error_code ec;
    std::filesystem::create_directories(spec.state_dir, ec);
    if (ec) return FailedPrecondition(context + "cannot create the task's state directory " + spec.state_dir + ": " + ec.message());
  }

  if (!spec.working_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(spec.working_dir, ec);
    if (ec) {
      return FailedPrecondition(context + "cannot create working directory " + spec.working_dir +
                                ": " + ec.message());
    }
  }
  Result<StdioEnds> stdio = OpenStdio(spec);
  if (!stdio.ok()) return WithContext(context, stdio.status());
  std::map<std::string, std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const std::size_t eq = text.find('=');
    if (eq != std::string_view::npos) env.emplace(text.substr(0, eq), text.substr(eq + 1));
  }
  for (const auto& [key, value] : spec.env) env[key] = value;
  const auto path_entry = env.find("PATH");
  const std::string path = path_entry != env.end() ? path_entry->second : "/bin:/usr/bin";

  std::vector<std::string> candidates = ExecCandidates(spec.argv[0], path);
  // Only the PATH entries that hold the command: the others would fail with
  // "not here" anyway, and a supervisor's command line carries the rest.
  if (spec.argv[0].find('/') == std::string::npos) {
    std::erase_if(candidates, [](const std::string& c) { return access(c.c_str(), F_OK) != 0 && (errno == ENOENT || errno == ENOTDIR); });
    if (candidates.empty()) return Explain({LaunchStep::kExec, ENOENT, 0}, spec, path, {});
  }
  std::vector<std::string> argv = spec.argv;
  std::vector<std::string> envp;
  for (const auto& [key, value] : env) envp.push_back(key + "=" + value);

  // The cgroup is made and limited here, where allocating and reporting the
  // whole story are allowed; the child only joins it.
  std::string cgroup;
  std::vector<std::string> join = spec.join_cgroup;
  const auto forget_cgroup = [&] {
    if (!cgroup.empty()) cgroups->Remove(cgroup);
  };
  if (join.empty() && cgroups != nullptr && cgroups->support().version != CgroupSupport::Version::kNone &&
      !spec.cgroup_name.empty()) {
    cgroup = spec.cgroup_name;
    Result<std::vector<std::string>> prepared = cgroups->Prepare(cgroup, spec.cpu_milli, spec.memory_bytes);
    if (!prepared.ok()) {
      forget_cgroup();
      return WithContext(context, prepared.status());
    }
    join = std::move(prepared).value();
  }

  std::optional<Pipe> report = MakePipe();
  if (!stdio->in.ok() || !report) {
    forget_cgroup();
    return Internal(context + "cannot create descriptors: " + ErrnoText(errno));
  }
  std::vector<std::string> supervisor_argv;
  if (supervised) {
    supervisor_argv = {spec.supervisor, spec.state_dir, std::to_string(report->write.get())};
    supervisor_argv.insert(supervisor_argv.end(), candidates.begin(), candidates.end());
    supervisor_argv.push_back(kSupervisorArgvSeparator);
    supervisor_argv.insert(supervisor_argv.end(), argv.begin(), argv.end());
  }
  const ChildPlan plan{report->write.get(),
                       stdio->in.get(),
                       stdio->out.ok() ? stdio->out.get() : stdio->in.get(),
                       stdio->err.ok() ? stdio->err.get() : stdio->in.get(),
                       stdio->terminal_path.empty() ? nullptr : stdio->terminal_path.c_str(),
                       spec.working_dir.empty() ? nullptr : spec.working_dir.c_str(),
                       NullTerminated(join),
                       NullTerminated(candidates),
                       NullTerminated(argv),
                       NullTerminated(envp),
                       supervised ? spec.supervisor.c_str() : nullptr,
                       NullTerminated(supervisor_argv)};

  // vfork, not fork: the child borrows the agent's address space instead of
  // copying its page tables, which in `tessera up` (a server and dozens of
  // agents in one process of gigabytes) was most of a launch's cost. This
  // thread waits until the child has exec'd or exited.
  sigset_t all, agent_mask;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &agent_mask);
  const pid_t pid = vfork();
  if (pid == 0) RunChild(plan);
  const int vfork_error = errno;
  pthread_sigmask(SIG_SETMASK, &agent_mask, nullptr);
  if (pid < 0) {
    forget_cgroup();
    return Internal(context + "vfork: " + ErrnoText(vfork_error));
  }
  report->write.Close();

  // End-of-file: the exec succeeded and closed the pipe. A report: the child failed and exited.
  LaunchFailure failure{};
  ssize_t got;
  while ((got = read(report->read.get(), &failure, sizeof failure)) < 0 && errno == EINTR) {
  }
  if (got == 0) {
    std::unique_ptr<TaskProcess> process(new TaskProcess(pid, cgroup));
    if (supervised) {
      // Our unreaped child: its pid cannot have been recycled yet.
      process->pidfd_ = PidfdOpen(pid);
      process->state_dir_ = spec.state_dir;
    }
    const std::array<int, 4> ends = ReleaseEnds(*stdio);
    process->terminal_ = ends[0];
    process->input_ = ends[1];
    process->output_ = ends[2];
    process->error_ = ends[3];
    return process;
  }
  if (got != sizeof failure) {
    kill(pid, SIGKILL);
    Reap(pid, nullptr);
    forget_cgroup();
    return Internal(context + "lost the child's report");
  }
  Reap(pid, nullptr);
  forget_cgroup();
  return Explain(failure, spec, path, join);
}

TaskProcess::~TaskProcess() {
  for (const int fd : {terminal_, input_, output_, error_}) {
    if (fd >= 0) close(fd);
  }
  if (!exit_status_ && !detached_) {
    Signal(SIGKILL);
    if (own_child_) {
      Reap(pid_, nullptr);
    } else if (pidfd_ >= 0) {
      pollfd gone{pidfd_, POLLIN, 0};
      poll(&gone, 1, 5'000);  // not our child: init reaps it
    }
  }
  if (pidfd_ >= 0) close(pidfd_);
}

Result<std::unique_ptr<TaskProcess>> TaskProcess::Adopt(const std::string& state_dir, std::string cgroup) {
  const std::optional<std::pair<pid_t, pid_t>> pids = ReadPids(state_dir);
  if (!pids) return NotFound("no supervisor recorded in " + state_dir);
  const int pidfd = PidfdOpen(pids->first);
  if (pidfd < 0) return NotFound("the supervisor of " + state_dir + " (pid " + std::to_string(pids->first) + ") is gone");
  if (!IsSupervisorOf(pidfd, pids->first, state_dir)) {
    close(pidfd);
    return NotFound("pid " + std::to_string(pids->first) + " is no longer the supervisor of " + state_dir);
  }
  std::unique_ptr<TaskProcess> process(new TaskProcess(pids->first, std::move(cgroup)));
  process->pidfd_ = pidfd;
  process->state_dir_ = state_dir;
  process->own_child_ = false;
  return process;
}

std::optional<int> TaskProcess::RecordedExit(const std::string& state_dir) {
  std::ifstream in(StateFile(state_dir, kSupervisorExitFile));
  int code = 0;
  if (!(in >> code)) return std::nullopt;
  return code;
}

void TaskProcess::KillSupervised(const std::string& state_dir) {
  const std::optional<std::pair<pid_t, pid_t>> pids = ReadPids(state_dir);
  if (!pids) return;
  const auto [supervisor, task] = *pids;
  if (const int pidfd = PidfdOpen(supervisor); pidfd >= 0) {
    if (IsSupervisorOf(pidfd, supervisor, state_dir)) PidfdSignal(pidfd, SIGKILL);
    close(pidfd);
  }
  // The task is still ours while it leads a group in the supervisor's session:
  // a recycled pid would be in another.
  if (getsid(task) == supervisor && getpgid(task) == task) kill(-task, SIGKILL);
}

void TaskProcess::Detach() {
  if (supervised()) detached_ = true;
}

void TaskProcess::CloseInput() {
  if (input_ >= 0) close(input_);
  input_ = -1;
}

std::optional<int> TaskProcess::Poll() {
  if (exit_status_) return exit_status_;
  if (supervised()) return PollSupervisor();
  // Observe the exit without reaping: the zombie keeps the pid, and so the group
  // id, from being recycled while the leader's leftovers are killed.
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid == 0) {
    return std::nullopt;
  }
  kill(-pid_, SIGKILL);
  int status = 0;
  Reap(pid_, &status);
  exit_status_ = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  return exit_status_;
}

void TaskProcess::Terminate(std::chrono::milliseconds grace) {
  if (exit_status_) return;
  Signal(SIGTERM);
  Signal(SIGCONT);
  const auto kill_at = std::chrono::steady_clock::now() + grace;
  if (!kill_at_ || kill_at < *kill_at_) kill_at_ = kill_at;
}

void TaskProcess::CheckpointThenTerminate(int checkpoint_signal, std::chrono::milliseconds checkpoint_grace,
                                          std::chrono::milliseconds grace) {
  if (exit_status_) return;
  if (checkpoint_signal == SIGTERM) return Terminate(checkpoint_grace + grace);
  Signal(checkpoint_signal);
  term_at_ = std::chrono::steady_clock::now() + checkpoint_grace;
  term_grace_ = grace;
}

void TaskProcess::CheckpointTaken() {
  if (term_at_) term_at_ = std::chrono::steady_clock::now();
}

void TaskProcess::KillIfOverdue() {
  const auto now = std::chrono::steady_clock::now();
  if (term_at_ && now >= *term_at_) {
    term_at_.reset();
    Terminate(term_grace_);
  }
  if (kill_at_ && now >= *kill_at_) Signal(SIGKILL);
}

void TaskProcess::Signal(int sig) {
  if (exit_status_) return;
  if (!supervised()) {
    kill(-pid_, sig);
    return;
  }
  // SIGKILL would kill the supervisor, not its task: it has a signal of its own.
  const int to_supervisor = sig == SIGKILL ? SupervisorKillSignal() : sig;
  if (pidfd_ >= 0) {
    PidfdSignal(pidfd_, to_supervisor);
  } else if (own_child_) {
    kill(pid_, to_supervisor);  // no pidfds (Linux before 5.3): our unreaped child is safe to name
  }
}

std::optional<int> TaskProcess::PollSupervisor() {
  if (pidfd_ >= 0) {
    pollfd exited{pidfd_, POLLIN, 0};
    if (poll(&exited, 1, 0) <= 0) return std::nullopt;
  } else {
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return std::nullopt;
  }
  int status = 0;
  if (own_child_) Reap(pid_, &status);
  if (const std::optional<int> recorded = RecordedExit(state_dir_)) {
    exit_status_ = recorded;
  } else {
    // Killed before it could record anything: its orphaned task goes too.
    KillSupervised(state_dir_);
    supervisor_lost_ = !own_child_ || WIFSIGNALED(status);
    exit_status_ = !own_child_ ? 128 + SIGKILL : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  }
  return exit_status_;
}

}  // namespace tessera::node
