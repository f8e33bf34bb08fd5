// The agent's side of GPU sharing (docs/gpu-sharing.md): which sharing modes
// the node offers, what a task that holds a fraction needs in its
// environment to be held to its share, and the burst rules.
//
//   vgpu       LD_PRELOAD=libtessera-vgpu.so plus the TESSERA_VGPU_* variables;
//              the GPU's memory ledger is created here, and the burst rules
//              read it every loop of the agent;
//   mps        the GPU's MPS control daemon (started on first use) and the
//              CUDA_MPS_* limits from the task's share;
//   timeslice  nothing: the GPU is shared without limits, as asked.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/agent_protocol.h"
#include "base/status.h"
#include "node/sharing/burst_policy.h"
#include "node/sharing/mps_daemons.h"
#include "vgpu/memory_ledger.h"

namespace tessera::node {

struct SharingOptions {
  std::string modes;         // "vgpu,mps,timeslice" or "exclusive"; empty: vgpu, timeslice, and mps where installed
  std::string vgpu_library;  // empty: libtessera-vgpu.so beside the running binary
  std::string data_dir;      // ledgers and MPS directories go under it
  std::chrono::seconds max_burst{300};  // how long a vGPU task may hold memory past its cap
};

struct SharedGpu {
  std::int32_t index = 0;
  std::string uuid;
  std::int64_t memory = 0;
};

class SharedGpus {
 public:
  // Settles what the node offers; each finding (a mode left out and why) is added to `findings`.
  static Result<std::unique_ptr<SharedGpus>> Create(const SharingOptions& options, std::vector<SharedGpu> gpus,
                                                    std::vector<std::string>* findings);

  const std::vector<std::string>& modes() const { return modes_; }

  // The node's files a task's sharing mode uses, by absolute path: what a
  // container must see at the same paths (the vGPU shim; its ledgers, the
  // MPS daemon's pipes and logs).
  struct NodePaths {
    std::vector<std::string> read_only;
    std::vector<std::string> writable;
  };
  // Adds what the task's sharing mode needs to its environment, and the
  // node's paths it names to `paths`. Whole-GPU tasks need nothing.
  Status Prepare(const api::Assignment& a, std::map<std::string, std::string>& env, NodePaths* paths = nullptr);
  // The task has ended: its ledger entries go.
  void Release(const api::Assignment& a);

  // What the burst rules ask for now, per task.
  std::vector<std::pair<api::TaskKey, BurstDecision>> CheckBursts(
      std::int64_t now_ns, const std::function<CheckpointContract(const api::TaskKey&)>& contract);
  // Memory held past caps, per GPU that has any (the status report carries it).
  std::map<std::int32_t, std::int64_t> BurstMemory() const;
  // GPU memory a vGPU task holds now, from its ledger; -1 for other tasks.
  std::int64_t MemoryUsed(const api::Assignment& a) const;

  // A task's name in a ledger, and back.
  static std::string LedgerName(const api::TaskKey& key);
  static std::optional<api::TaskKey> ParseLedgerName(const std::string& name);

 private:
  SharedGpus() = default;
  vgpu::MemoryLedger* Ledger(std::int32_t gpu, std::string* error);
  const SharedGpu* Find(std::int32_t gpu) const;

  std::vector<std::string> modes_;
  std::string vgpu_library_;
  std::string ledger_dir_;
  std::chrono::seconds max_burst_{300};
  std::vector<SharedGpu> gpus_;
  std::unique_ptr<MpsDaemons> mps_;
  std::map<std::int32_t, std::unique_ptr<vgpu::MemoryLedger>> ledgers_;
  std::map<std::int32_t, BurstPolicy> policies_;
};

}  // namespace tessera::node
