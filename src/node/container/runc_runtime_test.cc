// Real containers: runc runs a busybox rootfs made here, launched as a task
// under tessera-supervise exactly as the agent launches one.
#include "node/container/runc_runtime.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "node/image/command.h"
#include "node/launch/task_process.h"

namespace tessera::node {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class RuncRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "containers need root (overlay mounts, runc)";
    if (!fs::exists("/usr/sbin/runc") && !fs::exists("/usr/bin/runc")) GTEST_SKIP() << "runc is not installed (scripts/install-deps.sh)";
    if (!fs::exists("/bin/busybox")) GTEST_SKIP() << "busybox-static is not installed (scripts/install-deps.sh)";
    char pattern[] = "/tmp/runc-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
    image_ = root_ / "image";
    fs::create_directories(image_ / "bin");
    fs::copy_file("/bin/busybox", image_ / "bin/busybox");
    for (const char* applet : {"sh", "sleep", "echo", "cat"}) fs::create_symlink("busybox", image_ / "bin" / applet);
    runtime_ = std::make_unique<RuncRuntime>(RuncOptions{"runc", (root_ / "runc").string()});
  }
  void TearDown() override {
    for (const std::string& id : started_) runtime_->Remove(id, (root_ / id).string());
    if (!root_.empty()) fs::remove_all(root_);
  }

  // Starts container `id` running `script` under the supervisor; its output in root_/id.out and .err.
  std::unique_ptr<TaskProcess> Start(const std::string& id, const std::string& script) {
    ContainerSpec spec;
    spec.args = {"/bin/sh", "-c", script};
    spec.env = {"PATH=/bin"};
    spec.hostname = id;
    Result<std::vector<std::string>> argv = runtime_->Prepare(id, (root_ / id).string(), image_.string(), spec);
    EXPECT_TRUE(argv.ok()) << argv.status().message();
    if (!argv.ok()) return nullptr;
    started_.push_back(id);
    LaunchSpec launch;
    launch.argv = *argv;
    launch.stdout_path = (root_ / (id + ".out")).string();
    launch.stderr_path = (root_ / (id + ".err")).string();
    launch.supervisor = TESSERA_SUPERVISOR_PATH;
    launch.state_dir = (root_ / (id + ".state")).string();
    Result<std::unique_ptr<TaskProcess>> process = TaskProcess::Launch(launch, nullptr);
    EXPECT_TRUE(process.ok()) << process.status().message();
    return process.ok() ? std::move(*process) : nullptr;
  }

  std::optional<int> WaitForExit(TaskProcess& process, milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (std::optional<int> code = process.Poll()) return code;
      std::this_thread::sleep_for(milliseconds(20));
    }
    return std::nullopt;
  }

  bool WaitForOutput(const std::string& id, const std::string& text) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      if (Slurp(root_ / (id + ".out")).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(milliseconds(20));
    }
    return false;
  }

  fs::path root_, image_;
  std::unique_ptr<RuncRuntime> runtime_;
  std::vector<std::string> started_;
};

TEST_F(RuncRuntimeTest, RunsInItsOwnRootAndExitsWithItsStatus) {
  auto task = Start("c-exit", "echo out $(hostname); echo err >&2; echo data > /written; exit 7");
  ASSERT_NE(task, nullptr);
  const std::optional<int> code = WaitForExit(*task, std::chrono::seconds(20));
  ASSERT_TRUE(code.has_value()) << "the container did not end within 20 s; stderr: " << Slurp(root_ / "c-exit.err");
  EXPECT_EQ(*code, 7);
  EXPECT_EQ(Slurp(root_ / "c-exit.out"), "out c-exit\n");
  EXPECT_NE(Slurp(root_ / "c-exit.err").find("err"), std::string::npos);
  // What the task wrote is in its own layer; the image is untouched.
  EXPECT_EQ(Slurp(root_ / "c-exit" / "upper" / "written"), "data\n");
  EXPECT_FALSE(fs::exists(image_ / "written"));
  runtime_->Remove("c-exit", (root_ / "c-exit").string());
  EXPECT_FALSE(fs::exists(root_ / "c-exit" / "rootfs" / "bin")) << "the task's root is unmounted";
}

TEST_F(RuncRuntimeTest, ASignalReachesTheContainersProcess) {
  auto task = Start("c-signal", "trap 'echo checkpointing; exit 3' USR1; echo ready; while true; do sleep 0.05; done");
  ASSERT_NE(task, nullptr);
  ASSERT_TRUE(WaitForOutput("c-signal", "ready")) << Slurp(root_ / "c-signal.err");
  task->Signal(SIGUSR1);
  const std::optional<int> code = WaitForExit(*task, std::chrono::seconds(20));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 3);
  EXPECT_NE(Slurp(root_ / "c-signal.out").find("checkpointing"), std::string::npos);
}

TEST_F(RuncRuntimeTest, SigkillAndRemoveStopEveryProcessOfTheContainer) {
  // The shell is the container's first process, which ignores SIGTERM unless
  // it traps it (the kernel protects a pid namespace's init): only SIGKILL,
  // the agent's after the grace, stops it; Remove leaves nothing running.
  auto task = Start("c-kill", "sleep 60 & echo ready; wait");
  ASSERT_NE(task, nullptr);
  ASSERT_TRUE(WaitForOutput("c-kill", "ready")) << Slurp(root_ / "c-kill.err");
  task->Signal(SIGTERM);
  EXPECT_FALSE(WaitForExit(*task, milliseconds(500)).has_value()) << "SIGTERM does not stop an init without a handler";
  task->Signal(SIGKILL);
  const std::optional<int> code = WaitForExit(*task, std::chrono::seconds(20));
  ASSERT_TRUE(code.has_value()) << "SIGKILL did not end the task";
  EXPECT_EQ(*code, 128 + SIGKILL);
  runtime_->Remove("c-kill", (root_ / "c-kill").string());
  Result<CommandResult> listed = RunCommand({{"runc", "--root", (root_ / "runc").string(), "list", "-q"}, std::chrono::seconds(10)});
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->stdout_tail, "") << "the container should be gone";
}

TEST_F(RuncRuntimeTest, AContainerOutlivesItsOwnerAndIsAdoptedByTheNext) {
  auto task = Start("c-adopt", "trap 'exit 5' TERM; echo ready; while true; do sleep 0.05; done");
  ASSERT_NE(task, nullptr);
  ASSERT_TRUE(WaitForOutput("c-adopt", "ready")) << Slurp(root_ / "c-adopt.err");
  task->Detach();  // the agent that started it is gone
  task.reset();
  Result<std::unique_ptr<TaskProcess>> adopted = TaskProcess::Adopt((root_ / "c-adopt.state").string(), "");
  ASSERT_TRUE(adopted.ok()) << adopted.status().message();
  EXPECT_FALSE((*adopted)->Poll().has_value()) << "still running";
  (*adopted)->Signal(SIGTERM);
  const std::optional<int> code = WaitForExit(**adopted, std::chrono::seconds(20));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 5);
}

TEST_F(RuncRuntimeTest, AnImpossibleRootIsAnErrorNamingIt) {
  ContainerSpec spec;
  spec.args = {"/bin/true"};
  Result<std::vector<std::string>> argv = runtime_->Prepare("c-bad", (root_ / "c-bad").string(), (root_ / "no-such-image").string(), spec);
  ASSERT_FALSE(argv.ok());
  EXPECT_NE(argv.status().message().find("cannot mount the task's root"), std::string::npos) << argv.status().message();
  EXPECT_NE(argv.status().message().find("no-such-image"), std::string::npos) << argv.status().message();
}

}  // namespace
}  // namespace tessera::node
