// The shim in real processes: tessera-vgpu-probe runs with the shim preloaded
// against the stand-in driver, as a task runs under the agent.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

extern char** environ;

namespace tessera::vgpu {
namespace {

namespace fs = std::filesystem;
constexpr std::int64_t kGiB = std::int64_t{1} << 30;

std::string Required(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// A running probe: its output is read when it ends.
class Probe {
 public:
  Probe(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
    std::vector<std::string> storage{Required("TESSERA_VGPU_PROBE")};
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<std::string> env_storage;
    for (char** e = environ; *e; ++e) {
      const std::string entry = *e;
      if (!env.contains(entry.substr(0, entry.find('=')))) env_storage.push_back(entry);
    }
    for (const auto& [k, v] : env) env_storage.push_back(k + "=" + v);
    std::vector<char*> argv, envp;
    for (auto& s : storage) argv.push_back(s.data());
    for (auto& s : env_storage) envp.push_back(s.data());
    argv.push_back(nullptr);
    envp.push_back(nullptr);
    int out[2];
    EXPECT_EQ(pipe(out), 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    EXPECT_EQ(posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    out_ = out[0];
  }
  ~Probe() {
    if (pid_ > 0) Wait();
  }
  // The first line the probe printed (it prints once it holds its memory).
  std::string FirstLine() {
    std::string line;
    char c = 0;
    while (read(out_, &c, 1) == 1 && c != '\n') line += c;
    output_ += line + "\n";
    return line;
  }
  int Wait() {
    char buffer[4096];
    ssize_t n = 0;
    while ((n = read(out_, buffer, sizeof buffer)) > 0) output_.append(buffer, static_cast<std::size_t>(n));
    close(out_);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  const std::string& output() const { return output_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string output_;
};

// key=value pairs of one line of probe output.
std::map<std::string, std::string> Fields(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    const auto eq = word.find('=');
    if (eq != std::string::npos) fields[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return fields;
}

std::int64_t Int(const std::map<std::string, std::string>& f, const std::string& key) {
  const auto it = f.find(key);
  return it == f.end() ? -1 : std::stoll(it->second);
}

class VgpuShimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Required("TESSERA_VGPU_PROBE").empty()) GTEST_SKIP() << "run through ctest, which names the probe";
    dir_ = fs::temp_directory_path() / ("vgpu-shim-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The environment the agent gives a vGPU task.
  std::map<std::string, std::string> Task(const std::string& id, std::int64_t cap, std::int64_t burst = 0) const {
    return {{"LD_LIBRARY_PATH", Required("TESSERA_STANDIN_DIR")},
            {"LD_PRELOAD", Required("TESSERA_VGPU_SHIM")},
            {"TESSERA_VGPU_TASK", id},
            {"TESSERA_VGPU_LEDGERS", (dir_ / "gpu-0.ledger").string()},
            {"TESSERA_VGPU_MEMORY_LIMIT", std::to_string(cap)},
            {"TESSERA_VGPU_BURST_LIMIT", std::to_string(burst)},
            {"TESSERA_VGPU_RECLAIM_WAIT_MS", "200"}};
  }
  std::map<std::string, std::string> Run(const std::vector<std::string>& args,
                                         const std::map<std::string, std::string>& env) const {
    Probe probe(args, env);
    EXPECT_EQ(probe.Wait(), 0) << probe.output();
    return Fields(probe.output());
  }

  fs::path dir_;
};

TEST_F(VgpuShimTest, WithoutTheShimATaskSeesTheWholeGpu) {
  auto env = Task("t", 4 * kGiB);
  env.erase("LD_PRELOAD");
  const auto info = Run({"info"}, env);
  EXPECT_EQ(Int(info, "total"), 16 * kGiB);
  EXPECT_EQ(Int(info, "device_total"), 16 * kGiB);
}

TEST_F(VgpuShimTest, CuMemGetInfoAndCuDeviceTotalMemShowTheVirtualSize) {
  for (const std::string lookup : {"--default", "--direct"}) {
    const auto info = Run({lookup, "info"}, Task("t", 4 * kGiB));
    EXPECT_EQ(Int(info, "total"), 4 * kGiB) << lookup;
    EXPECT_EQ(Int(info, "free"), 4 * kGiB) << lookup;
    EXPECT_EQ(Int(info, "device_total"), 4 * kGiB) << lookup;
  }
}

TEST_F(VgpuShimTest, EveryAllocationCallStopsAtTheCap) {
  const std::string chunk = std::to_string(kGiB);
  for (const std::string api : {"alloc", "async", "pool", "managed", "create", "pitch"}) {
    for (const std::string lookup : {"--cuGetProcAddress", "--direct"}) {
      // The probe takes --direct; looking up through cuGetProcAddress is its default.
      const auto got = Run({lookup == "--direct" ? lookup : "--default", "alloc", chunk, "--count", "10", "--api", api},
                           Task("t-" + api + lookup, 4 * kGiB));
      EXPECT_EQ(Int(got, "allocated"), 4 * kGiB) << api << " " << lookup;
      EXPECT_EQ(Int(got, "result"), 2) << "CUDA_ERROR_OUT_OF_MEMORY, " << api << " " << lookup;
    }
  }
}

TEST_F(VgpuShimTest, TheProcessesOfATaskShareOneCap) {
  Probe holder({"alloc", std::to_string(kGiB), "--count", "3", "--hold", "30"}, Task("shared", 4 * kGiB));
  ASSERT_EQ(Int(Fields(holder.FirstLine()), "allocated"), 3 * kGiB);
  const auto second = Run({"alloc", std::to_string(kGiB), "--count", "4"}, Task("shared", 4 * kGiB));
  EXPECT_EQ(Int(second, "allocated"), kGiB) << "the first process holds 3 of the task's 4 GiB";
  const auto other = Run({"alloc", std::to_string(kGiB), "--count", "4"}, Task("other", 4 * kGiB));
  EXPECT_EQ(Int(other, "allocated"), 4 * kGiB) << "another task has a cap of its own";
  kill(holder.pid(), SIGTERM);
}

TEST_F(VgpuShimTest, AKilledProcessGivesItsShareBack) {
  Probe holder({"alloc", std::to_string(kGiB), "--count", "4", "--hold", "60"}, Task("t", 4 * kGiB));
  ASSERT_EQ(Int(Fields(holder.FirstLine()), "allocated"), 4 * kGiB);
  EXPECT_EQ(Int(Run({"alloc", std::to_string(kGiB)}, Task("t", 4 * kGiB)), "allocated"), 0);
  // SIGKILL: no cuMemFree runs; the ledger notices the process is gone.
  kill(holder.pid(), SIGKILL);
  EXPECT_EQ(holder.Wait(), 128 + SIGKILL);
  EXPECT_EQ(Int(Run({"alloc", std::to_string(kGiB), "--count", "4"}, Task("t", 4 * kGiB)), "allocated"), 4 * kGiB);
}

TEST_F(VgpuShimTest, AnInterposerAfterTheShimStillFindsTheNextDefinition) {
  // The task preloads its own getpid interposer after the shim; the shim
  // calls getpid on every allocation. dlsym(RTLD_NEXT) from the interposer
  // must reach the C library, not the interposer itself (endless recursion).
  auto env = Task("t", 4 * kGiB);
  env["LD_PRELOAD"] += " " + Required("TESSERA_STANDIN_DIR") + "/libtessera_next_interposer.so";
  EXPECT_EQ(Int(Run({"alloc", std::to_string(kGiB), "--count", "5"}, env), "allocated"), 4 * kGiB);
}

TEST_F(VgpuShimTest, ABurstGoesPastTheCapUpToItsAllowance) {
  const auto got = Run({"alloc", std::to_string(kGiB), "--count", "10"}, Task("t", 4 * kGiB, 2 * kGiB));
  EXPECT_EQ(Int(got, "allocated"), 6 * kGiB);
}

TEST_F(VgpuShimTest, AGuaranteedAllocationWaitsForABurstToBeReturned) {
  // A 16 GiB GPU: the burster holds 4 + 10 GiB; the owner's 6 GiB cap needs 4 of them back.
  Probe burster({"alloc", std::to_string(kGiB), "--count", "14", "--hold", "2"}, Task("burster", 4 * kGiB, 10 * kGiB));
  ASSERT_EQ(Int(Fields(burster.FirstLine()), "allocated"), 14 * kGiB);
  auto owner_env = Task("owner", 6 * kGiB);
  owner_env["TESSERA_VGPU_RECLAIM_WAIT_MS"] = "30000";
  const auto owner = Run({"alloc", std::to_string(kGiB), "--count", "6"}, owner_env);
  EXPECT_EQ(Int(owner, "allocated"), 6 * kGiB) << "granted once the burster freed its memory";
  EXPECT_EQ(burster.Wait(), 0);
}

TEST_F(VgpuShimTest, KernelLaunchesAreHeldNearTheComputeShare) {
  auto env = Task("t", 4 * kGiB);
  const auto alone = Run({"launch", "2"}, env);
  env["TESSERA_VGPU_COMPUTE_PERCENT"] = "30";
  const auto paced = Run({"launch", "3", "--warmup", "1"}, env);
  const double full = std::stod(alone.at("utilization"));
  const double share = std::stod(paced.at("utilization"));
  std::printf("stand-in GPU utilization: unpaced %.1f%%, paced to 30%%: %.1f%%\n", full, share);
  EXPECT_GT(full, 60);
  // A loaded machine can only push the achieved share down, never up.
  EXPECT_LT(share, 30 * 1.25);
  EXPECT_GT(share, 5);
}

}  // namespace
}  // namespace tessera::vgpu
