#include "node/sharing/shared_gpus.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace tessera::node {
namespace {

namespace fs = std::filesystem;
constexpr std::int64_t kGiB = std::int64_t{1} << 30;

class SharedGpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("shared-gpus-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "bin");
    shim_ = (dir_ / "libtessera-vgpu.so").string();
    std::ofstream(shim_) << "stand-in";
    old_path_ = std::getenv("PATH") ? std::getenv("PATH") : "";
  }
  void TearDown() override {
    setenv("PATH", old_path_.c_str(), 1);
    fs::remove_all(dir_);
  }
  // A fake nvidia-cuda-mps-control that records how it was called.
  void InstallFakeMps() {
    const fs::path script = dir_ / "bin" / "nvidia-cuda-mps-control";
    std::ofstream(script) << "#!/bin/sh\n"
                          << "echo \"args=$* visible=$CUDA_VISIBLE_DEVICES pipe=$CUDA_MPS_PIPE_DIRECTORY stdin=$(cat)\" >> "
                          << (dir_ / "mps.calls").string() << "\n";
    fs::permissions(script, fs::perms::owner_all);
    setenv("PATH", ((dir_ / "bin").string() + ":" + old_path_).c_str(), 1);
  }
  std::string Calls() const {
    std::ifstream in(dir_ / "mps.calls");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::unique_ptr<SharedGpus> Make(const std::string& modes, std::vector<std::string>* findings) {
    SharingOptions options{modes, shim_, dir_.string(), std::chrono::seconds(300)};
    Result<std::unique_ptr<SharedGpus>> shared =
        SharedGpus::Create(options, {{0, "GPU-aaaa", 80 * kGiB}, {1, "GPU-bbbb", 80 * kGiB}}, findings);
    EXPECT_TRUE(shared.ok()) << shared.status().message();
    return shared.ok() ? std::move(*shared) : nullptr;
  }
  static api::Assignment Fraction(const std::string& mode, std::int32_t gpu) {
    api::Assignment a;
    a.key = {7, 2, 1};
    a.gpus = {gpu};
    a.gpu_milli = 250;
    a.gpu_memory = 20 * kGiB;
    a.gpu_memory_burst = 4 * kGiB;
    a.gpu_sharing = mode;
    return a;
  }

  fs::path dir_;
  std::string shim_;
  std::string old_path_;
};

TEST_F(SharedGpusTest, ByDefaultANodeOffersVgpuAndTimeSlicingAndMpsWhereInstalled) {
  setenv("PATH", (dir_ / "bin").c_str(), 1);
  std::vector<std::string> findings;
  EXPECT_EQ(Make("", &findings)->modes(), (std::vector<std::string>{"vgpu", "timeslice"}));
  InstallFakeMps();
  EXPECT_EQ(Make("", &findings)->modes(), (std::vector<std::string>{"vgpu", "mps", "timeslice"}));
  EXPECT_TRUE(Make("exclusive", &findings)->modes().empty());
}

TEST_F(SharedGpusTest, WithoutTheShimVgpuIsLeftOutAndSaidSo) {
  std::vector<std::string> findings;
  SharingOptions options{"", "", dir_.string(), std::chrono::seconds(300)};
  options.vgpu_library = "";
  setenv("PATH", (dir_ / "bin").c_str(), 1);
  // The default location is beside the test binary, where there is no shim.
  auto shared = SharedGpus::Create(options, {{0, "GPU-aaaa", 80 * kGiB}}, &findings);
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ((*shared)->modes(), (std::vector<std::string>{"timeslice"}));
  ASSERT_FALSE(findings.empty());
  EXPECT_NE(findings.front().find("vgpu left out"), std::string::npos) << findings.front();
}

TEST_F(SharedGpusTest, AskingForMpsWithoutItIsAnError) {
  setenv("PATH", (dir_ / "bin").c_str(), 1);
  std::vector<std::string> findings;
  auto shared = SharedGpus::Create({"mps", shim_, dir_.string(), std::chrono::seconds(1)}, {{0, "", kGiB}}, &findings);
  ASSERT_FALSE(shared.ok());
  EXPECT_NE(shared.status().message().find("nvidia-cuda-mps-control is not on PATH"), std::string::npos);
}

TEST_F(SharedGpusTest, AVgpuTaskGetsTheShimAndItsLimits) {
  std::vector<std::string> findings;
  auto shared = Make("vgpu", &findings);
  std::map<std::string, std::string> env{{"LD_PRELOAD", "libmine.so"}};
  SharedGpus::NodePaths paths;
  ASSERT_TRUE(shared->Prepare(Fraction("vgpu", 1), env, &paths).ok());
  // What a container must see: the shim read-only, the ledgers writable, by absolute path.
  EXPECT_EQ(paths.read_only, std::vector<std::string>{shim_});
  ASSERT_EQ(paths.writable.size(), 1u);
  EXPECT_TRUE(fs::path(paths.writable[0]).is_absolute()) << paths.writable[0];
  EXPECT_EQ(fs::path(env["TESSERA_VGPU_LEDGERS"]).parent_path(), fs::path(paths.writable[0]));
  EXPECT_EQ(env["LD_PRELOAD"], shim_ + " libmine.so") << "the shim first, the task's own preload kept";
  EXPECT_EQ(env["TESSERA_VGPU_TASK"], "7.2.1");
  EXPECT_EQ(env["TESSERA_VGPU_MEMORY_LIMIT"], std::to_string(20 * kGiB));
  EXPECT_EQ(env["TESSERA_VGPU_BURST_LIMIT"], std::to_string(4 * kGiB));
  EXPECT_EQ(env["TESSERA_VGPU_COMPUTE_PERCENT"], "25");
  EXPECT_EQ(env["TESSERA_VGPU_NVML_INDICES"], "1");
  EXPECT_TRUE(fs::exists(env["TESSERA_VGPU_LEDGERS"])) << "the ledger exists before the task starts";
  std::string error;
  auto ledger = vgpu::MemoryLedger::Open(env["TESSERA_VGPU_LEDGERS"], 0, &error);
  ASSERT_TRUE(ledger);
  EXPECT_EQ(ledger->Read().physical, 80 * kGiB) << "sized from the GPU's inventory";
}

TEST_F(SharedGpusTest, AnMpsTaskGetsItsDaemonAndShare) {
  InstallFakeMps();
  std::vector<std::string> findings;
  auto shared = Make("mps", &findings);
  std::map<std::string, std::string> env;
  ASSERT_TRUE(shared->Prepare(Fraction("mps", 1), env).ok());
  SharedGpus::NodePaths paths;
  ASSERT_TRUE(shared->Prepare(Fraction("mps", 1), env, &paths).ok());
  EXPECT_EQ(paths.writable, (std::vector<std::string>{env["CUDA_MPS_PIPE_DIRECTORY"], env["CUDA_MPS_LOG_DIRECTORY"]}));
  EXPECT_TRUE(paths.read_only.empty());
  EXPECT_EQ(env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "25");
  EXPECT_EQ(env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=20480M");
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "GPU-bbbb");
  const std::string pipe = env["CUDA_MPS_PIPE_DIRECTORY"];
  EXPECT_NE(pipe.find("gpu-1"), std::string::npos);
  EXPECT_EQ(Calls(), "args=-d visible=GPU-bbbb pipe=" + pipe + " stdin=\n") << "one daemon per GPU, started once";
  shared.reset();  // the agent stops: the daemon is told to quit
  EXPECT_NE(Calls().find("args= visible="), std::string::npos);
  EXPECT_NE(Calls().find("stdin=quit"), std::string::npos) << Calls();
}

TEST_F(SharedGpusTest, AModeTheNodeDoesNotOfferIsRefused) {
  std::vector<std::string> findings;
  auto shared = Make("vgpu", &findings);
  std::map<std::string, std::string> env;
  const Status status = shared->Prepare(Fraction("timeslice", 0), env);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("does not share GPUs as timeslice"), std::string::npos);
}

TEST_F(SharedGpusTest, BurstsAreReportedAndTheRulesApplied) {
  std::vector<std::string> findings;
  auto shared = Make("vgpu", &findings);
  std::map<std::string, std::string> env;
  const api::Assignment a = Fraction("vgpu", 0);
  ASSERT_TRUE(shared->Prepare(a, env).ok());
  std::string error;
  auto ledger = vgpu::MemoryLedger::Open(env["TESSERA_VGPU_LEDGERS"], 0, &error);
  ASSERT_EQ(ledger->Reserve({"7.2.1", 20 * kGiB, 4 * kGiB}, getpid(), 23 * kGiB, 1), vgpu::Grant::kBurst);
  EXPECT_EQ(shared->BurstMemory(), (std::map<std::int32_t, std::int64_t>{{0, 3 * kGiB}}));
  // A guaranteed task on the same GPU wants memory the burst holds.
  ASSERT_EQ(ledger->Reserve({"9.0.0", 60 * kGiB, 0}, getppid(), 60 * kGiB, 2), vgpu::Grant::kReclaim);
  const auto decisions = shared->CheckBursts(100, [](const api::TaskKey&) { return CheckpointContract{true, 1}; });
  ASSERT_EQ(decisions.size(), 1U);
  EXPECT_EQ(decisions[0].first, a.key);
  EXPECT_EQ(decisions[0].second.action, BurstDecision::Action::kAsk);
  shared->Release(a);
  EXPECT_TRUE(shared->BurstMemory().empty()) << "an ended task leaves the ledger";
}

TEST_F(SharedGpusTest, LedgerNamesRoundTrip) {
  const api::TaskKey key{123456789012, 3, 17};
  EXPECT_EQ(SharedGpus::ParseLedgerName(SharedGpus::LedgerName(key)), key);
  EXPECT_FALSE(SharedGpus::ParseLedgerName("pid-42").has_value());
  EXPECT_FALSE(SharedGpus::ParseLedgerName("1.2.3x").has_value());
}

}  // namespace
}  // namespace tessera::node
