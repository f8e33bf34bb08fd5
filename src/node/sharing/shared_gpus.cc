#include "node/sharing/shared_gpus.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "base/self_path.h"
#include "model/gpu_sharing.h"

namespace tessera::node {
namespace {

namespace fs = std::filesystem;

// How a task holding a fraction of one GPU shares it ("vgpu" unless it says);
// empty for every other task.
std::string FractionMode(const api::Assignment& a) {
  if (a.gpu_milli <= 0 || a.gpu_milli >= 1000 || a.gpus.size() != 1) return "";
  return a.gpu_sharing.empty() ? "vgpu" : a.gpu_sharing;
}

std::string Join(const std::vector<std::int32_t>& values, char separator) {
  std::string out;
  for (const std::int32_t v : values) out += (out.empty() ? "" : std::string(1, separator)) + std::to_string(v);
  return out;
}

}  // namespace

Result<std::unique_ptr<SharedGpus>> SharedGpus::Create(const SharingOptions& options, std::vector<SharedGpu> gpus,
                                                       std::vector<std::string>* findings) {
  std::unique_ptr<SharedGpus> shared(new SharedGpus());
  shared->gpus_ = std::move(gpus);
  shared->max_burst_ = options.max_burst;
  // Absolute: tasks (and containers) start elsewhere than the agent.
  std::error_code ec;
  const fs::path data_dir = fs::absolute(options.data_dir, ec);
  shared->ledger_dir_ = (data_dir / "vgpu").string();
  shared->vgpu_library_ = fs::absolute(options.vgpu_library.empty() ? BesideThisProgram("libtessera-vgpu.so") : options.vgpu_library, ec).string();
  const std::optional<std::string> mps_control = MpsDaemons::FindControl();

  model::GpuSharingSet wanted = model::kDefaultGpuSharing;
  if (!options.modes.empty()) {
    Result<model::GpuSharingSet> parsed = model::ParseGpuSharingList(options.modes);
    if (!parsed.ok()) return Status(StatusCode::kInvalidArgument, "--gpu-sharing: " + parsed.status().message());
    wanted = *parsed;
  } else if (mps_control) {
    wanted.Add(model::GpuSharing::kMps);
  }
  if (wanted.Has(model::GpuSharing::kVgpu) && access(shared->vgpu_library_.c_str(), R_OK) != 0) {
    if (!options.vgpu_library.empty()) {
      return Status(StatusCode::kFailedPrecondition, "--vgpu-library: cannot read " + shared->vgpu_library_);
    }
    wanted.Remove(model::GpuSharing::kVgpu);
    findings->push_back("GPU sharing: vgpu left out: " + shared->vgpu_library_ + " not found");
  }
  if (wanted.Has(model::GpuSharing::kMps)) {
    if (!mps_control) {
      return Status(StatusCode::kFailedPrecondition, "--gpu-sharing asks for mps, but nvidia-cuda-mps-control is not on PATH");
    }
    shared->mps_ = std::make_unique<MpsDaemons>(*mps_control, data_dir / "mps");
  }
  if (shared->gpus_.empty()) wanted = {};
  for (const model::GpuSharing mode : model::kAllGpuSharing) {
    if (wanted.Has(mode)) shared->modes_.emplace_back(model::ToString(mode));
  }
  findings->push_back("GPU sharing: " + model::ToString(wanted) +
                      (wanted.Has(model::GpuSharing::kVgpu) ? " (vGPU shim " + shared->vgpu_library_ + ")" : ""));
  return shared;
}

std::string SharedGpus::LedgerName(const api::TaskKey& key) {
  return std::to_string(key.job) + "." + std::to_string(key.attempt) + "." + std::to_string(key.task);
}

std::optional<api::TaskKey> SharedGpus::ParseLedgerName(const std::string& name) {
  api::TaskKey key;
  long long job = 0;  // NOLINT(google-runtime-int): sscanf's type
  int attempt = 0, task = 0, used = 0;
  if (std::sscanf(name.c_str(), "%lld.%d.%d%n", &job, &attempt, &task, &used) != 3 ||
      static_cast<std::size_t>(used) != name.size()) {
    return std::nullopt;
  }
  key.job = job;
  key.attempt = attempt;
  key.task = task;
  return key;
}

const SharedGpu* SharedGpus::Find(std::int32_t gpu) const {
  const auto it = std::find_if(gpus_.begin(), gpus_.end(), [&](const SharedGpu& g) { return g.index == gpu; });
  return it == gpus_.end() ? nullptr : &*it;
}

vgpu::MemoryLedger* SharedGpus::Ledger(std::int32_t gpu, std::string* error) {
  auto& ledger = ledgers_[gpu];
  if (!ledger) {
    const SharedGpu* facts = Find(gpu);
    std::error_code ec;
    fs::create_directories(ledger_dir_, ec);
    ledger = vgpu::MemoryLedger::Open((fs::path(ledger_dir_) / ("gpu-" + std::to_string(gpu) + ".ledger")).string(),
                                      facts ? facts->memory : 0, error);
    if (!ledger) ledgers_.erase(gpu);
    policies_.try_emplace(gpu, std::chrono::nanoseconds(max_burst_).count());
  }
  return ledgers_.contains(gpu) ? ledgers_[gpu].get() : nullptr;
}

Status SharedGpus::Prepare(const api::Assignment& a, std::map<std::string, std::string>& env, NodePaths* paths) {
  NodePaths ignored;
  NodePaths& out = paths != nullptr ? *paths : ignored;
  const std::string mode = FractionMode(a);
  if (mode.empty()) return Status::Ok();
  if (mode == "mig") {
    // The hardware isolates a MIG device: the task sees only it, by its UUID.
    if (a.mig_device.empty()) return Status(StatusCode::kInvalidArgument, "a MIG task's assignment names no MIG device");
    env["TESSERA_GPU_SHARING"] = mode;
    env["CUDA_VISIBLE_DEVICES"] = a.mig_device;
    return Status::Ok();
  }
  if (std::find(modes_.begin(), modes_.end(), mode) == modes_.end()) {
    return Status(StatusCode::kFailedPrecondition, "this node does not share GPUs as " + mode);
  }
  const std::int32_t gpu = a.gpus.front();
  const std::string percent = std::to_string(std::max(1, a.gpu_milli / 10));
  env["TESSERA_GPU_SHARING"] = mode;
  if (mode == "vgpu") {
    std::string error;
    vgpu::MemoryLedger* ledger = Ledger(gpu, &error);
    if (!ledger) return Status(StatusCode::kFailedPrecondition, error);
    const auto preload = env.find("LD_PRELOAD");
    env["LD_PRELOAD"] = vgpu_library_ + (preload != env.end() && !preload->second.empty() ? " " + preload->second : "");
    env["TESSERA_VGPU_TASK"] = LedgerName(a.key);
    env["TESSERA_VGPU_LEDGERS"] = (fs::path(ledger_dir_) / ("gpu-" + std::to_string(gpu) + ".ledger")).string();
    env["TESSERA_VGPU_MEMORY_LIMIT"] = std::to_string(a.gpu_memory);
    env["TESSERA_VGPU_BURST_LIMIT"] = std::to_string(a.gpu_memory_burst);
    env["TESSERA_VGPU_COMPUTE_PERCENT"] = percent;
    env["TESSERA_VGPU_NVML_INDICES"] = Join(a.gpus, ',');
    out.read_only.push_back(vgpu_library_);
    out.writable.push_back(ledger_dir_);
  } else if (mode == "mps") {
    const SharedGpu* facts = Find(gpu);
    Result<MpsDaemons::Paths> daemon = mps_->Ensure(gpu, facts ? facts->uuid : "");
    if (!daemon.ok()) return daemon.status();
    env["CUDA_MPS_PIPE_DIRECTORY"] = daemon->pipe_dir;
    env["CUDA_MPS_LOG_DIRECTORY"] = daemon->log_dir;
    out.writable.push_back(daemon->pipe_dir);
    out.writable.push_back(daemon->log_dir);
    env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = percent;
    // The client sees only its daemon's GPU, as device 0.
    env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] = "0=" + std::to_string(std::max<std::int64_t>(1, a.gpu_memory >> 20)) + "M";
    if (facts && !facts->uuid.empty()) env["CUDA_VISIBLE_DEVICES"] = facts->uuid;
  }
  return Status::Ok();
}

void SharedGpus::Release(const api::Assignment& a) {
  if (FractionMode(a) != "vgpu") return;
  if (auto it = ledgers_.find(a.gpus.front()); it != ledgers_.end()) it->second->Forget(LedgerName(a.key));
}

std::vector<std::pair<api::TaskKey, BurstDecision>> SharedGpus::CheckBursts(
    std::int64_t now_ns, const std::function<CheckpointContract(const api::TaskKey&)>& contract) {
  std::vector<std::pair<api::TaskKey, BurstDecision>> out;
  for (auto& [gpu, ledger] : ledgers_) {
    ledger->CollectDead();
    bool clear_reclaim = false;
    const auto decisions = policies_.at(gpu).Decide(
        ledger->Read(), now_ns,
        [&](const std::string& name) {
          const std::optional<api::TaskKey> key = ParseLedgerName(name);
          return key ? contract(*key) : CheckpointContract{};
        },
        &clear_reclaim);
    if (clear_reclaim) ledger->ClearReclaim();
    for (const BurstDecision& d : decisions) {
      if (const std::optional<api::TaskKey> key = ParseLedgerName(d.task)) out.emplace_back(*key, d);
    }
  }
  return out;
}

std::int64_t SharedGpus::MemoryUsed(const api::Assignment& a) const {
  if (FractionMode(a) != "vgpu") return -1;
  const auto it = ledgers_.find(a.gpus.front());
  return it == ledgers_.end() ? -1 : it->second->TaskUsed(LedgerName(a.key));
}

std::map<std::int32_t, std::int64_t> SharedGpus::BurstMemory() const {
  std::map<std::int32_t, std::int64_t> out;
  for (const auto& [gpu, ledger] : ledgers_) {
    std::int64_t burst = 0;
    for (const vgpu::TaskUsage& t : ledger->Read().tasks) burst += std::max<std::int64_t>(0, t.used - t.cap);
    if (burst > 0) out[gpu] = burst;
  }
  return out;
}

}  // namespace tessera::node
