#include "node/launch/task_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "node/launch/test_temp_dir.h"

namespace tessera::node {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

LaunchSpec PlainCommand(std::vector<std::string> argv) {
  LaunchSpec spec;
  spec.argv = std::move(argv);
  return spec;
}
LaunchSpec PlainShell(const std::string& script) { return PlainCommand({"sh", "-c", script}); }

// Every test of a task on log files runs twice: launched directly, and under
// tessera-supervise, which must not change what the task sees or how it ends.
class TaskProcessTest : public testing::TestWithParam<bool> {
 protected:
  bool supervised() const { return GetParam(); }
  LaunchSpec Command(std::vector<std::string> argv) {
    LaunchSpec spec = PlainCommand(std::move(argv));
    if (supervised()) {
      spec.supervisor = TESSERA_SUPERVISOR_PATH;
      spec.state_dir = state_ / ("task-" + std::to_string(++tasks_));
    }
    return spec;
  }
  LaunchSpec Shell(const std::string& script) { return Command({"sh", "-c", script}); }

  TestTempDir state_;
  int tasks_ = 0;
};
INSTANTIATE_TEST_SUITE_P(DirectAndSupervised, TaskProcessTest, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& param) { return param.param ? "Supervised" : "Direct"; });

std::unique_ptr<TaskProcess> MustLaunch(const LaunchSpec& spec, Cgroups* cgroups = nullptr) {
  auto launched = TaskProcess::Launch(spec, cgroups);
  EXPECT_TRUE(launched.ok()) << launched.status().message();
  return launched.ok() ? std::move(launched).value() : nullptr;
}

// Polls (and enforces Terminate's grace) until the task exits or `limit` passes.
std::optional<int> WaitForExit(TaskProcess& task, std::chrono::milliseconds limit = 10s) {
  for (const auto deadline = Clock::now() + limit; Clock::now() < deadline;) {
    task.KillIfOverdue();
    if (auto status = task.Poll()) return status;
    std::this_thread::sleep_for(2ms);
  }
  return std::nullopt;
}

// Waits until `path` has a complete first line, and returns it.
std::string WaitForLine(const std::string& path) {
  for (const auto deadline = Clock::now() + 10s; Clock::now() < deadline;) {
    const std::string text = ReadAll(path);
    if (const auto end = text.find('\n'); end != std::string::npos) return text.substr(0, end);
    std::this_thread::sleep_for(2ms);
  }
  return "";
}

// Whether `pid` has died. A killed orphan may linger as a zombie until init
// reaps it; a zombie runs nothing, so it counts as gone.
bool Gone(pid_t pid) {
  for (const auto deadline = Clock::now() + 5s; Clock::now() < deadline;) {
    const std::string stat = ReadAll("/proc/" + std::to_string(pid) + "/stat");
    const auto state = stat.rfind(") ");
    if (kill(pid, 0) != 0 || (state != std::string::npos && stat[state + 2] == 'Z')) return true;
    std::this_thread::sleep_for(2ms);
  }
  return false;
}

TEST_P(TaskProcessTest, ReportsTheExitCodeAndAppendsBothLogs) {
  TestTempDir dir;
  LaunchSpec spec = Shell("echo out; echo err >&2; exit 3");
  spec.stdout_path = dir / "logs/deep/stdout.log";  // parent directories are created
  spec.stderr_path = dir / "logs/deep/stderr.log";
  for (int run = 0; run < 2; ++run) {
    auto task = MustLaunch(spec);
    ASSERT_NE(task, nullptr);
    EXPECT_EQ(WaitForExit(*task), 3);
  }
  EXPECT_EQ(ReadAll(spec.stdout_path), "out\nout\n");
  EXPECT_EQ(ReadAll(spec.stderr_path), "err\nerr\n");
  const mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(std::filesystem::status(spec.stdout_path).permissions(),
            std::filesystem::perms(0644 & ~mask));
}

TEST_P(TaskProcessTest, ChildSeesTheAddedAndOverriddenEnvironment) {
  TestTempDir dir;
  LaunchSpec spec = Shell("echo \"$TESSERA_TEST_VAR|$HOME|${PATH:+has path}\"");
  spec.env = {{"TESSERA_TEST_VAR", "a b=c"}, {"HOME", "/nonexistent/home"}};
  spec.stdout_path = dir / "out";
  auto task = MustLaunch(spec);
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(WaitForExit(*task), 0);
  EXPECT_EQ(ReadAll(spec.stdout_path), "a b=c|/nonexistent/home|has path\n");
}

TEST_P(TaskProcessTest, WorkingDirectoryIsCreatedAndEntered) {
  TestTempDir dir;
  LaunchSpec spec = Shell("pwd -P");
  spec.working_dir = dir / "work/a/b";
  spec.stdout_path = dir / "out";
  auto task = MustLaunch(spec);
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(WaitForExit(*task), 0);
  EXPECT_EQ(ReadAll(spec.stdout_path),
            std::filesystem::canonical(spec.working_dir).string() + "\n");
}

TEST_P(TaskProcessTest, CommandNotFoundIsAnErrorNamingIt) {
  const auto launched = TaskProcess::Launch(Command({"tessera-no-such-command"}), nullptr);
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.status().code(), StatusCode::kNotFound);
  EXPECT_NE(launched.status().message().find("command not found: tessera-no-such-command"),
            std::string::npos)
      << launched.status().message();
}

TEST_P(TaskProcessTest, NonExecutableFileAndImpossibleWorkingDirAreErrors) {
  TestTempDir dir;
  dir.Write("not-executable", "#!/bin/sh\n");
  const auto not_executable = TaskProcess::Launch(Command({dir / "not-executable"}), nullptr);
  ASSERT_FALSE(not_executable.ok());
  EXPECT_NE(not_executable.status().message().find("permission denied"), std::string::npos)
      << not_executable.status().message();

  LaunchSpec spec = Shell("true");
  spec.working_dir = dir / "not-executable/sub";  // under a regular file
  const auto bad_dir = TaskProcess::Launch(spec, nullptr);
  ASSERT_FALSE(bad_dir.ok());
  EXPECT_NE(bad_dir.status().message().find("working directory " + spec.working_dir),
            std::string::npos)
      << bad_dir.status().message();
}

TEST_P(TaskProcessTest, TerminateReachesGrandchildren) {
  TestTempDir dir;
  LaunchSpec spec = Shell("sleep 100 & echo $!; sleep 100");
  spec.stdout_path = dir / "out";
  auto task = MustLaunch(spec);
  ASSERT_NE(task, nullptr);
  const pid_t grandchild = std::stoi(WaitForLine(spec.stdout_path));
  task->Terminate(10s);
  EXPECT_EQ(WaitForExit(*task), 128 + SIGTERM);
  EXPECT_TRUE(Gone(grandchild));
}

// Launches a script that prints "ready" once its traps are set, and waits for that.
std::unique_ptr<TaskProcess> LaunchWhenReady(LaunchSpec spec, const TestTempDir& dir) {
  spec.stdout_path = dir / "out";
  auto task = MustLaunch(spec);
  if (task == nullptr || WaitForLine(spec.stdout_path) != "ready") {
    ADD_FAILURE() << "the task never said ready";
    return nullptr;
  }
  return task;
}

TEST_P(TaskProcessTest, TaskIgnoringSigtermIsKilledAfterTheGrace) {
  TestTempDir dir;
  auto task = LaunchWhenReady(Shell("trap '' TERM; echo ready; sleep 100"), dir);
  ASSERT_NE(task, nullptr);
  const auto start = Clock::now();
  task->Terminate(200ms);
  EXPECT_EQ(WaitForExit(*task), 128 + SIGKILL);
  EXPECT_GE(Clock::now() - start, 200ms);
}

TEST_P(TaskProcessTest, TheCheckpointSignalComesFirstAndTheTaskMayFinishWithinItsGrace) {
  TestTempDir dir;
  LaunchSpec spec = Shell("trap 'echo checkpointed > \"$0\"; exit 0' USR1; echo ready; while :; do sleep 0.01; done");
  spec.argv.push_back(dir / "checkpoint");  // $0 of the script
  auto task = LaunchWhenReady(spec, dir);
  ASSERT_NE(task, nullptr);
  task->CheckpointThenTerminate(SIGUSR1, 5s, 1s);
  EXPECT_EQ(WaitForExit(*task), 0);
  EXPECT_EQ(ReadAll(dir / "checkpoint"), "checkpointed\n");
}

TEST_P(TaskProcessTest, ATaskThatIgnoresTheCheckpointSignalIsTerminatedAfterItsGrace) {
  TestTempDir dir;
  auto task = LaunchWhenReady(Shell("trap '' USR1; echo ready; sleep 100"), dir);
  ASSERT_NE(task, nullptr);
  const auto start = Clock::now();
  task->CheckpointThenTerminate(SIGUSR1, 200ms, 5s);
  EXPECT_EQ(WaitForExit(*task), 128 + SIGTERM);
  EXPECT_GE(Clock::now() - start, 200ms);
}

TEST_P(TaskProcessTest, AReportedCheckpointEndsTheCheckpointGrace) {
  TestTempDir dir;
  auto task = LaunchWhenReady(Shell("trap '' USR1; trap 'exit 7' TERM; echo ready; while :; do sleep 0.01; done"), dir);
  ASSERT_NE(task, nullptr);
  task->CheckpointThenTerminate(SIGUSR1, 1h, 5s);
  task->CheckpointTaken();
  EXPECT_EQ(WaitForExit(*task), 7);  // SIGTERM at once, not after the hour
}

TEST_P(TaskProcessTest, ExitBySignalIs128PlusTheSignal) {
  auto task = MustLaunch(Command({"sleep", "100"}));
  ASSERT_NE(task, nullptr);
  task->Signal(SIGUSR1);
  EXPECT_EQ(WaitForExit(*task), 128 + SIGUSR1);
}

TEST_P(TaskProcessTest, TaskStartsWithDefaultSignalHandlingWhateverTheAgentDoes) {
  sigset_t usr1, agent_mask;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, &agent_mask);
  const auto agent_usr2 = signal(SIGUSR2, SIG_IGN);
  auto blocking = MustLaunch(Command({"sleep", "100"}));
  auto ignoring = MustLaunch(Command({"sleep", "100"}));
  pthread_sigmask(SIG_SETMASK, &agent_mask, nullptr);
  signal(SIGUSR2, agent_usr2);
  ASSERT_NE(blocking, nullptr);
  ASSERT_NE(ignoring, nullptr);
  blocking->Signal(SIGUSR1);
  ignoring->Signal(SIGUSR2);
  EXPECT_EQ(WaitForExit(*blocking), 128 + SIGUSR1);
  EXPECT_EQ(WaitForExit(*ignoring), 128 + SIGUSR2);
}

TEST_P(TaskProcessTest, LeftoversDieWithTheLeader) {
  TestTempDir dir;
  LaunchSpec spec = Shell("sleep 100 & echo $!");
  spec.stdout_path = dir / "out";
  auto task = MustLaunch(spec);
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(WaitForExit(*task), 0);
  EXPECT_TRUE(Gone(std::stoi(WaitForLine(spec.stdout_path))));
}

TEST_P(TaskProcessTest, DestroyingARunningTaskKillsAndReapsIt) {
  auto task = MustLaunch(Command({"sleep", "100"}));
  ASSERT_NE(task, nullptr);
  const pid_t pid = task->pid();
  task.reset();
  EXPECT_NE(kill(pid, 0), 0);  // reaped: not even a zombie
}

// What only a supervisor does: its task outlives the object (the agent) that
// launched it, and a later one adopts it or reads how it ended.
class SupervisedTaskTest : public TaskProcessTest {};
INSTANTIATE_TEST_SUITE_P(Supervised, SupervisedTaskTest, testing::Values(true));

TEST_P(SupervisedTaskTest, ADetachedTaskKeepsRunningAndIsAdoptedByTheNextOwner) {
  TestTempDir dir;
  const LaunchSpec spec = Shell("echo ready; trap 'echo adopted-and-stopped; exit 4' TERM; while :; do sleep 0.01; done");
  auto task = LaunchWhenReady(spec, dir);
  ASSERT_NE(task, nullptr);
  task->Detach();
  task.reset();  // the agent goes; the task does not
  auto adopted = TaskProcess::Adopt(spec.state_dir, "");
  ASSERT_TRUE(adopted.ok()) << adopted.status().message();
  EXPECT_FALSE((*adopted)->Poll().has_value());
  (*adopted)->Terminate(10s);
  EXPECT_EQ(WaitForExit(**adopted), 4);
  EXPECT_FALSE((*adopted)->supervisor_lost());
  EXPECT_EQ(ReadAll(dir / "out"), "ready\nadopted-and-stopped\n");
}

TEST_P(SupervisedTaskTest, AnExitWhileNobodyWatchesIsRecordedForTheNextOwner) {
  const LaunchSpec spec = Shell("sleep 0.2; exit 9");
  auto task = MustLaunch(spec);
  ASSERT_NE(task, nullptr);
  task->Detach();
  task.reset();
  std::optional<int> recorded;
  for (const auto deadline = Clock::now() + 10s; !recorded && Clock::now() < deadline; std::this_thread::sleep_for(5ms)) {
    recorded = TaskProcess::RecordedExit(spec.state_dir);
  }
  EXPECT_EQ(recorded, 9);
  const auto adopted = TaskProcess::Adopt(spec.state_dir, "");
  ASSERT_FALSE(adopted.ok());
  EXPECT_EQ(adopted.status().code(), StatusCode::kNotFound);
}

TEST_P(SupervisedTaskTest, AKilledSupervisorTakesItsTaskAlong) {
  const LaunchSpec spec = Command({"sleep", "100"});
  auto task = MustLaunch(spec);
  ASSERT_NE(task, nullptr);
  std::string pids;
  for (const auto deadline = Clock::now() + 10s; pids.empty() && Clock::now() < deadline; std::this_thread::sleep_for(2ms)) {
    pids = ReadAll(spec.state_dir + "/pids");
  }
  const pid_t sleeper = std::stoi(pids.substr(pids.find(' ') + 1));
  kill(task->pid(), SIGKILL);
  EXPECT_EQ(WaitForExit(*task), 128 + SIGKILL);
  EXPECT_TRUE(task->supervisor_lost());
  EXPECT_TRUE(Gone(sleeper));
}

TEST_P(SupervisedTaskTest, APidThatIsNotTheSupervisorIsNeverAdopted) {
  TestTempDir dir;
  dir.Write("state/pids", std::to_string(getpid()) + " " + std::to_string(getpid()) + "\n");
  const auto adopted = TaskProcess::Adopt(dir / "state", "");
  ASSERT_FALSE(adopted.ok());
  EXPECT_NE(adopted.status().message().find("no longer the supervisor"), std::string::npos) << adopted.status().message();
}

// Reads what the agent's end of a pipe or terminal gets until `want` shows up or 10 s pass.
std::string ReadUntil(int fd, const std::string& want) {
  std::string got;
  char buffer[4096];
  for (const auto deadline = Clock::now() + 10s; Clock::now() < deadline && got.find(want) == std::string::npos;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    got.append(buffer, static_cast<std::size_t>(n));
  }
  return got;
}

TEST(TaskProcessInteractiveTest, OnATerminalTheTaskHasAControllingTerminalOfTheAskedSize) {
  LaunchSpec spec = PlainShell("test -t 0 && test -t 1 && test -t 2 && echo all-terminal; stty size; read line; echo got:$line");
  spec.stdio = LaunchSpec::Stdio::kTerminal;
  spec.rows = 33;
  spec.cols = 101;
  auto task = MustLaunch(spec);
  ASSERT_NE(task, nullptr);
  ASSERT_GE(task->terminal(), 0);
  EXPECT_EQ(task->input(), -1);
  const std::string first = ReadUntil(task->terminal(), "33 101");
  EXPECT_NE(first.find("all-terminal"), std::string::npos) << first;
  EXPECT_NE(first.find("33 101"), std::string::npos) << first;
  ASSERT_EQ(write(task->terminal(), "hello\n", 6), 6);
  EXPECT_NE(ReadUntil(task->terminal(), "got:hello").find("got:hello"), std::string::npos);
  EXPECT_EQ(WaitForExit(*task), 0);
}

TEST(TaskProcessInteractiveTest, OnATerminalCtrlCInterruptsTheForegroundCommand) {
  LaunchSpec spec = PlainShell("trap 'echo interrupted; exit 5' INT; echo ready; sleep 30 & wait");
  spec.stdio = LaunchSpec::Stdio::kTerminal;
  auto task = MustLaunch(spec);
  ASSERT_NE(task, nullptr);
  ASSERT_NE(ReadUntil(task->terminal(), "ready").find("ready"), std::string::npos);
  ASSERT_EQ(write(task->terminal(), "\x03", 1), 1);  // ^C, as a user types it
  EXPECT_NE(ReadUntil(task->terminal(), "interrupted").find("interrupted"), std::string::npos);
  EXPECT_EQ(WaitForExit(*task), 5);
}

TEST(TaskProcessInteractiveTest, ATaskOnATerminalCannotBeSupervised) {
  LaunchSpec spec = PlainShell("true");
  spec.stdio = LaunchSpec::Stdio::kTerminal;
  spec.supervisor = TESSERA_SUPERVISOR_PATH;
  spec.state_dir = testing::TempDir() + "never-created";
  const auto launched = TaskProcess::Launch(spec, nullptr);
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.status().code(), StatusCode::kInvalidArgument);
}

TEST(TaskProcessInteractiveTest, OnPipesStdoutAndStderrStayApartAndClosingInputIsEndOfFile) {
  LaunchSpec spec = PlainShell("echo to-stderr >&2; wc -l");
  spec.stdio = LaunchSpec::Stdio::kPipes;
  auto task = MustLaunch(spec);
  ASSERT_NE(task, nullptr);
  ASSERT_EQ(task->terminal(), -1);
  EXPECT_EQ(ReadUntil(task->error(), "\n"), "to-stderr\n");
  ASSERT_EQ(write(task->input(), "a\nb\nc\n", 6), 6);
  task->CloseInput();
  EXPECT_EQ(task->input(), -1);
  EXPECT_EQ(ReadUntil(task->output(), "\n"), "3\n");
  EXPECT_EQ(WaitForExit(*task), 0);
}

// A cgroup the child cannot join (here a stand-in tree without the kernel's
// cgroup.procs): the launch fails naming the file, and leaves no process and
// no group behind.
TEST(TaskProcessCgroupTest, ACgroupTheChildCannotJoinFailsTheLaunchAndIsRemoved) {
  TestTempDir fs;
  fs.Write("sys/fs/cgroup/cgroup.controllers", "cpu memory\n");
  fs.Write("sys/fs/cgroup/cgroup.subtree_control", "");
  fs.Write("sys/fs/cgroup/cgroup.procs", "1\n");
  fs.Write("sys/fs/cgroup/tessera/cgroup.subtree_control", "");
  const auto cgroups = Cgroups::DetectFrom("30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "0::/\n",
                                           fs.path(), "tessera");
  ASSERT_EQ(cgroups->support().version, CgroupSupport::Version::kV2) << cgroups->Describe();
  LaunchSpec spec = PlainShell("touch " + (fs / "ran"));
  spec.cgroup_name = "task-1";
  const auto launched = TaskProcess::Launch(spec, cgroups.get());
  ASSERT_FALSE(launched.ok());
  EXPECT_EQ(launched.status().message(), "launching sh: cannot join cgroup " + (fs / "sys/fs/cgroup/tessera/task-1/cgroup.procs") +
                                             ": No such file or directory");
  EXPECT_FALSE(std::filesystem::exists(fs / "ran"));
  EXPECT_FALSE(std::filesystem::exists(fs / "sys/fs/cgroup/tessera/task-1"));
}

// On the real machine, when it lets us make cgroups.
class CgroupTaskTest : public testing::Test {
 protected:
  void SetUp() override {
    cgroups_ = Cgroups::Detect("tessera-test-" + std::to_string(getpid()));
    if (!cgroups_->support().cpu || !cgroups_->support().memory) {
      GTEST_SKIP() << "needs cgroup cpu and memory control: " << cgroups_->Describe();
    }
  }
  std::unique_ptr<Cgroups> cgroups_;
  TestTempDir dir_;
};

TEST_F(CgroupTaskTest, TaskRunsInItsGroupWithItsLimitsFromTheStart) {
  LaunchSpec spec = PlainShell("cat /proc/self/cgroup");
  spec.stdout_path = dir_ / "out";
  spec.cgroup_name = "placed";
  spec.cpu_milli = 250;
  spec.memory_bytes = 64 << 20;
  auto task = MustLaunch(spec, cgroups_.get());
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(task->cgroup(), "placed");
  EXPECT_EQ(WaitForExit(*task), 0);
  EXPECT_NE(ReadAll(spec.stdout_path).find("/tessera-test-" + std::to_string(getpid()) + "/placed"),
            std::string::npos)
      << ReadAll(spec.stdout_path);

  const CgroupSupport& s = cgroups_->support();
  if (s.version == CgroupSupport::Version::kV2) {
    EXPECT_EQ(ReadAll(s.root + "/placed/cpu.max"), "25000 100000\n");
    EXPECT_EQ(ReadAll(s.root + "/placed/memory.max"), std::to_string(64 << 20) + "\n");
  } else {
    EXPECT_EQ(ReadAll(s.cpu_dir + "/placed/cpu.cfs_quota_us"), "25000\n");
    EXPECT_EQ(ReadAll(s.memory_dir + "/placed/memory.limit_in_bytes"),
              std::to_string(64 << 20) + "\n");
  }
  EXPECT_FALSE(cgroups_->OomKilled("placed"));
  cgroups_->Remove("placed");
  EXPECT_FALSE(std::filesystem::exists(s.cpu_dir + "/placed"));
  EXPECT_FALSE(std::filesystem::exists(s.memory_dir + "/placed"));
}

TEST_F(CgroupTaskTest, TaskOverItsMemoryLimitIsOomKilled) {
  // tail keeps the whole newline-free input in memory.
  LaunchSpec spec = PlainShell("head -c 200M /dev/zero | tail");
  spec.cgroup_name = "hungry";
  spec.memory_bytes = 32 << 20;
  auto task = MustLaunch(spec, cgroups_.get());
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(WaitForExit(*task), 128 + SIGKILL);
  EXPECT_TRUE(cgroups_->OomKilled("hungry"));
  cgroups_->Remove("hungry");
}

}  // namespace
}  // namespace tessera::node
