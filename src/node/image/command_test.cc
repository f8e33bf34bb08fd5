#include "node/image/command.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tessera::node {
namespace {

using ::testing::HasSubstr;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

CommandResult RunOk(std::vector<std::string> argv, milliseconds timeout = milliseconds(10000)) {
  Result<CommandResult> result = RunCommand(CommandSpec{.argv = std::move(argv), .timeout = timeout});
  EXPECT_TRUE(result.ok()) << result.status().message();
  return result.ok() ? *result : CommandResult{};
}

// Whether `pid` is gone or a zombie (the reaper of an orphan here may be a
// PID 1 that never reaps).
bool Dead(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  if (!stat) return true;
  std::string text;
  std::getline(stat, text);  // one line
  const std::size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] == 'Z';
}

bool DiesWithin(const std::string& pid, milliseconds limit) {
  for (const auto deadline = steady_clock::now() + limit; steady_clock::now() < deadline;) {
    if (Dead(pid)) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return Dead(pid);
}

TEST(CommandTest, CapturesStdoutStderrAndTheExitCode) {
  const CommandResult result = RunOk({"sh", "-c", "echo out; echo err >&2; exit 3"});
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.stdout_tail, "out\n");
  EXPECT_EQ(result.stderr_tail, "err\n");
}

TEST(CommandTest, ArgumentsReachTheProgramUnchangedWithoutAShell) {
  const CommandResult result = RunOk({"printf", "%s|", "a b", "$HOME", "*", "'q'"});
  EXPECT_EQ(result.stdout_tail, "a b|$HOME|*|'q'|");
}

TEST(CommandTest, AProgramThatCannotStartIsAStatusNamingIt) {
  Result<CommandResult> missing = RunCommand(CommandSpec{.argv = {"tessera-no-such-program"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kFailedPrecondition);
  // ENOENT, or EACCES when a directory on PATH cannot be searched (execvp's rule).
  EXPECT_THAT(missing.status().message(), ::testing::StartsWith("cannot start tessera-no-such-program: "));
  Result<CommandResult> absent = RunCommand(CommandSpec{.argv = {"/nonexistent/program"}});
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().message(), "cannot start /nonexistent/program: No such file or directory");

  Result<CommandResult> not_executable = RunCommand(CommandSpec{.argv = {"/etc/passwd"}});
  ASSERT_FALSE(not_executable.ok());
  EXPECT_EQ(not_executable.status().message(), "cannot start /etc/passwd: Permission denied");

  EXPECT_FALSE(RunCommand(CommandSpec{}).ok());
}

TEST(CommandTest, SignalsAreReportedAs128PlusTheSignal) {
  EXPECT_EQ(RunOk({"sh", "-c", "kill -TERM $$"}).exit_code, 128 + SIGTERM);
}

TEST(CommandTest, StdinIsDevNull) {
  const CommandResult result = RunOk({"cat"}, milliseconds(5000));
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.stdout_tail, "");
}

TEST(CommandTest, KeepsOnlyTheTailOfALargeOutput) {
  // 200,000 lines "0\n".."199999\n"; the tail must end exactly with the last ones.
  const CommandResult result = RunOk({"seq", "0", "199999"});
  ASSERT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.stdout_tail.size(), kCommandOutputTailBytes);
  EXPECT_THAT(result.stdout_tail, ::testing::EndsWith("199998\n199999\n"));
}

TEST(CommandTest, StreamsStdoutLinesAsTheyArrive) {
  std::vector<std::string> lines;
  CommandSpec spec{.argv = {"sh", "-c", "echo one; printf 'two\\nthr'; sleep 0.05; printf 'ee\\nlast'"}};
  spec.on_stdout_line = [&](std::string_view line) { lines.emplace_back(line); };
  Result<CommandResult> result = RunCommand(spec);
  ASSERT_TRUE(result.ok());
  EXPECT_THAT(lines, ::testing::ElementsAre("one", "two", "three", "last"));
}

TEST(CommandTest, TheDeadlineKillsTheWholeProcessGroup) {
  const auto start = steady_clock::now();
  // The shell prints its background child's pid, then waits on it.
  const CommandResult result = RunOk({"sh", "-c", "sleep 30 & echo $!; wait"}, milliseconds(300));
  const auto took = steady_clock::now() - start;
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.exit_code, 128 + SIGKILL);
  EXPECT_LT(took, milliseconds(5000));
  const std::string grandchild = result.stdout_tail.substr(0, result.stdout_tail.find('\n'));
  ASSERT_FALSE(grandchild.empty());
  EXPECT_TRUE(DiesWithin(grandchild, milliseconds(2000))) << "sleep " << grandchild << " outlived the deadline";
}

TEST(CommandTest, AStragglerHoldingThePipesDoesNotHoldTheCaller) {
  const auto start = steady_clock::now();
  const CommandResult result = RunOk({"sh", "-c", "sleep 30 & echo $!"}, milliseconds(20000));
  EXPECT_LT(steady_clock::now() - start, milliseconds(5000));
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, 0);
  const std::string straggler = result.stdout_tail.substr(0, result.stdout_tail.find('\n'));
  EXPECT_TRUE(DiesWithin(straggler, milliseconds(2000)));
}

// The pipes this test process holds ("pipe:[inode]").
std::set<std::string> OwnPipes() {
  std::set<std::string> pipes;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    const std::string target = std::filesystem::read_symlink(entry.path(), ec).string();
    if (!ec && target.rfind("pipe:", 0) == 0) pipes.insert(target);
  }
  return pipes;
}

TEST(CommandTest, ChildrenInheritNoPipeOfAnotherCommand) {
  // Two commands at once: neither shell may hold a pipe beyond its own stdout
  // and stderr, except those this test process inherited itself (from
  // whatever started it) -- a descriptor leaked from the other spawn would be
  // a pipe of neither kind.
  const std::set<std::string> inherited = OwnPipes();
  const std::vector<std::string> argv = {"sh", "-c", "sleep 0.2; ls -l /proc/$$/fd"};
  CommandResult first, second;
  std::thread other([&] { first = RunOk(argv); });
  second = RunOk(argv);
  other.join();
  for (const CommandResult* result : {&first, &second}) {
    EXPECT_THAT(result->stdout_tail, HasSubstr(" 1 -> pipe:"));
    std::istringstream lines(result->stdout_tail);
    for (std::string line; std::getline(lines, line);) {
      const std::size_t arrow = line.find(" -> ");
      if (arrow == std::string::npos || line.find("pipe:", arrow) == std::string::npos) continue;
      const std::size_t space = line.rfind(' ', arrow - 1);
      const std::string fd = line.substr(space + 1, arrow - space - 1);
      const std::string pipe = line.substr(arrow + 4);
      EXPECT_TRUE(fd == "1" || fd == "2" || inherited.count(pipe) != 0)
          << "descriptor " << fd << " is a leaked pipe:\n" << result->stdout_tail;
    }
  }
}

}  // namespace
}  // namespace tessera::node
